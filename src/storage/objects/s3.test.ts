import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { startS3, type TestS3 } from '../../../test/support/s3-server.js';
import { ObjectNotFound, ObjectTooLarge } from './object-store.js';
import { S3ObjectStore } from './s3.js';

describe('S3ObjectStore (against s3rver)', () => {
  let s3: TestS3;
  let store: S3ObjectStore;
  const opts = { contentType: 'text/csv', maxBytes: 100 };
  before(async () => {
    s3 = await startS3();
    store = new S3ObjectStore({
      bucket: s3.bucket,
      region: 'us-east-1',
      endpoint: s3.endpoint,
      publicEndpoint: null,
      forcePathStyle: true,
      transfers: 'direct',
    });
  });
  after(async () => {
    store.destroy();
    await s3.close();
  });

  it('puts, heads, gets, lists and deletes', async () => {
    const info = await store.put('datasets/d1/uploads/j1', Readable.from(['a,b\n', '1,2\n']), opts);
    assert.equal(info.size, 8);
    assert.equal((await store.head('datasets/d1/uploads/j1'))?.size, 8);
    assert.equal(await text(await store.get('datasets/d1/uploads/j1')), 'a,b\n1,2\n');
    await store.put('datasets/d1/exports/1.csv', Readable.from(['x']), opts);
    await store.put('datasets/d10/exports/1.csv', Readable.from(['y']), opts);
    assert.deepEqual(
      (await store.list('datasets/d1/')).map((o) => o.key),
      ['datasets/d1/exports/1.csv', 'datasets/d1/uploads/j1'],
    );
    await store.delete('datasets/d1/uploads/j1');
    await store.delete('datasets/d1/uploads/j1');
    assert.equal(await store.head('datasets/d1/uploads/j1'), null);
    await assert.rejects(store.get('datasets/d1/uploads/j1'), ObjectNotFound);
    await store.deletePrefix('datasets/d1/');
    assert.deepEqual(await store.list('datasets/d1/'), []);
    // A sibling whose name merely starts the same is untouched.
    assert.deepEqual(
      (await store.list('datasets/d10/')).map((o) => o.key),
      ['datasets/d10/exports/1.csv'],
    );
  });

  it('streams a multipart upload larger than one part', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'z');
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < 12; i++) yield chunk;
      })(),
    );
    const info = await store.put('datasets/big/uploads/j', body, { contentType: 'text/csv', maxBytes: 20e6 });
    assert.equal(info.size, 12 * 1024 * 1024);
    assert.equal((await store.head('datasets/big/uploads/j'))?.size, 12 * 1024 * 1024);
    let read = 0;
    for await (const c of await store.get('datasets/big/uploads/j')) read += (c as Buffer).length;
    assert.equal(read, 12 * 1024 * 1024);
  });

  it('leaves nothing behind when the stream is too large or fails', async () => {
    await assert.rejects(
      store.put('datasets/d2/uploads/big', Readable.from(['x'.repeat(60), 'y'.repeat(60)]), opts),
      ObjectTooLarge,
    );
    const failing = new Readable({
      read() {
        this.destroy(new Error('client went away'));
      },
    });
    await assert.rejects(store.put('datasets/d2/uploads/cut', failing, opts), /client went away/);
    assert.deepEqual(await store.list('datasets/d2/'), []);
  });

  it('presigns a PUT that a plain HTTP client can use, for an hour, signing only the host', async () => {
    const key = 'datasets/d3/uploads/j3';
    const before = Date.now();
    const signed = await store.presignPut(key, { expiresInSeconds: 3600 });
    const url = new URL(signed.url);
    assert.equal(url.origin, s3.endpoint);
    assert.equal(url.pathname, `/${s3.bucket}/${key}`);
    assert.equal(url.searchParams.get('X-Amz-Expires'), '3600');
    assert.equal(url.searchParams.get('X-Amz-SignedHeaders'), 'host');
    assert.ok(Math.abs(signed.expiresAt.getTime() - (before + 3600_000)) < 5000);
    for (const contentType of ['text/csv', 'application/octet-stream']) {
      const res = await fetch(signed.url, {
        method: 'PUT',
        headers: { 'content-type': contentType },
        body: 'id\n1\n',
      });
      assert.equal(res.status, 200, contentType);
    }
    assert.equal((await store.head(key))?.size, 5);
    const get = await store.presignGet(key, { expiresInSeconds: 3600 });
    const res = await fetch(get.url);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'id\n1\n');
  });

  it('presigned URLs stop working when they expire', async () => {
    const key = 'datasets/d4/uploads/j4';
    const signed = await store.presignPut(key, { expiresInSeconds: 1 });
    await new Promise((r) => setTimeout(r, 2100));
    const res = await fetch(signed.url, { method: 'PUT', body: 'id\n1\n' });
    assert.equal(res.status, 403);
    assert.equal(await store.head(key), null);
  });

  it('signs URLs for the public endpoint when it differs from the service’s', async () => {
    const port = new URL(s3.endpoint).port;
    const publicStore = new S3ObjectStore({
      bucket: s3.bucket,
      region: 'us-east-1',
      endpoint: s3.endpoint,
      publicEndpoint: `http://localhost:${port}`,
      forcePathStyle: true,
      transfers: 'direct',
    });
    try {
      const signed = await publicStore.presignPut('datasets/d5/uploads/j5', { expiresInSeconds: 60 });
      assert.equal(new URL(signed.url).host, `localhost:${port}`);
      const res = await fetch(signed.url, { method: 'PUT', body: 'id\n1\n' });
      assert.equal(res.status, 200);
      assert.equal((await publicStore.head('datasets/d5/uploads/j5'))?.size, 5);
    } finally {
      publicStore.destroy();
    }
  });

  it('deletes more objects than one DeleteObjects request takes', async () => {
    const keys = Array.from(
      { length: 1005 },
      (_, i) => `datasets/d6/exports/${String(i).padStart(4, '0')}.csv`,
    );
    for (let i = 0; i < keys.length; i += 200) {
      await Promise.all(keys.slice(i, i + 200).map((k) => store.put(k, Readable.from(['x']), opts)));
    }
    assert.equal((await store.list('datasets/d6/')).length, 1005);
    await store.deletePrefix('datasets/d6/');
    assert.deepEqual(await store.list('datasets/d6/'), []);
  });

  it('refuses keys and prefixes that could name the whole bucket', async () => {
    await assert.rejects(store.deletePrefix(''), /invalid object prefix/);
    await assert.rejects(store.deletePrefix('/'), /invalid object prefix/);
    await assert.rejects(store.list('datasets'), /invalid object prefix/);
    await assert.rejects(store.get(''), /invalid object key/);
  });
});
