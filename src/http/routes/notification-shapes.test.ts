import { test } from 'node:test';
import assert from 'node:assert/strict';
import { objectKeysOfNotification } from './notification-shapes.js';

const s3Event = (bucket: string, key: string) => ({ s3: { bucket: { name: bucket }, object: { key } } });

test('S3 events: the keys of this bucket, URL-decoded, each once', () => {
  const body = {
    Records: [
      s3Event('dx', 'datasets/a/uploads/j1'),
      s3Event('dx', 'datasets/a/uploads/j1'),
      s3Event('other', 'datasets/a/uploads/j2'),
      s3Event('dx', 'datasets/a/uploads/with+space%2Bplus'),
      s3Event('dx', 'bad%E0%A4%A'),
      { s3: { bucket: { name: 'dx' }, object: { key: 42 } } },
      'junk',
    ],
  };
  assert.deepEqual(objectKeysOfNotification(body, 'dx'), [
    'datasets/a/uploads/j1',
    'datasets/a/uploads/with space+plus',
  ]);
});

test('EventBridge and Pub/Sub shapes; anything else yields nothing', () => {
  assert.deepEqual(
    objectKeysOfNotification({ detail: { bucket: { name: 'dx' }, object: { key: 'a%3Ab' } } }, 'dx'),
    ['a:b'],
  );
  // Pub/Sub carries GCS object names as they are (not URL-encoded).
  assert.deepEqual(
    objectKeysOfNotification({ message: { attributes: { bucketId: 'dx', objectId: 'a%3Ab' } } }, 'dx'),
    ['a%3Ab'],
  );
  for (const body of [null, [], 'text', { Records: 'x' }, { detail: [] }, { message: { attributes: [] } }]) {
    assert.deepEqual(objectKeysOfNotification(body, 'dx'), [], JSON.stringify(body));
  }
});
