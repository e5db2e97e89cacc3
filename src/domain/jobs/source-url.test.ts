import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openSourceUrl, sealSourceUrl, shownSourceUrl, sourceUrlKey } from './source-url.js';

const URL_ = 'https://u:secret@bucket.example.com/a/b.csv?X-Amz-Signature=abc&X-Amz-Date=1#x';

test('a sealed URL opens under the same key and job only', () => {
  const key = sourceUrlKey('s'.repeat(32));
  const sealed = sealSourceUrl(key, 'job-1', URL_);
  assert.ok(!sealed.includes('secret') && !sealed.includes('abc'));
  assert.equal(openSourceUrl(key, 'job-1', sealed), URL_);
  assert.equal(openSourceUrl(key, 'job-2', sealed), null, 'bound to its job');
  assert.equal(openSourceUrl(sourceUrlKey('t'.repeat(32)), 'job-1', sealed), null, 'another secret');
  const altered = sealed.slice(0, -2) + (sealed.endsWith('A') ? 'BB' : 'AA');
  assert.equal(openSourceUrl(key, 'job-1', altered), null, 'altered');
  assert.notEqual(sealSourceUrl(key, 'job-1', URL_), sealed, 'a fresh IV each time');
  // A URL stored before sealing (migration 012 keeps a queued one) reads as itself.
  assert.equal(openSourceUrl(key, 'job-1', 'https://example.com/x.csv'), 'https://example.com/x.csv');
});

test('the shown URL has no user, password, query value or fragment', () => {
  assert.equal(shownSourceUrl(URL_), 'https://bucket.example.com/a/b.csv?X-Amz-Signature&X-Amz-Date');
  assert.equal(shownSourceUrl('http://h:81/p'), 'http://h:81/p');
  assert.equal(shownSourceUrl('not a url'), '(invalid URL)');
});
