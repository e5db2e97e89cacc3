// The object store seam, one suite for every store: files under a data directory, and an
// S3-compatible bucket (the tests' store: a real one such as Ceph RGW, or s3rver). What only one
// store has (file modes; presigned URLs, key rules) follows as that store's own cases, and what
// only a store that verifies signatures shows runs on a real store alone.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { LocalObjectStore } from '../../src/storage/objects/local.js';
import { ObjectNotFound, ObjectTooLarge, type ObjectStore } from '../../src/storage/objects/index.js';
import { S3ObjectStore } from '../../src/storage/objects/s3.js';
import { realStoreOnly, S3_TEST_CREDENTIALS, startS3, type TestS3 } from '../support/s3-server.js';

const opts = { contentType: 'text/csv', maxBytes: 100 };

/** A stream that fails as a client that went away does. */
function failingStream(): Readable {
  return new Readable({
    read() {
      this.destroy(new Error('client went away'));
    },
  });
}

/** The cases every object store passes; `store` is read when a case runs. */
function objectStoreCases(store: () => ObjectStore): void {
  it('sweeping abandoned puts leaves a put in progress alone', async () => {
    const s = store();
    const body = new PassThrough();
    const putting = s.put('datasets/p1/uploads/live', body, { ...opts, maxBytes: 1000 });
    body.write('id,name\n');
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.equal(await s.removeAbandonedPuts(Date.now() - 60_000), 0);
    body.end('1,a\n');
    await putting;
    assert.equal(await text(await s.get('datasets/p1/uploads/live')), 'id,name\n1,a\n');
  });

  it('puts, heads, gets, lists and deletes', async () => {
    const s = store();
    const info = await s.put('datasets/d1/uploads/j1', Readable.from(['a,b\n', '1,2\n']), opts);
    assert.equal(info.size, 8);
    assert.equal((await s.head('datasets/d1/uploads/j1'))?.size, 8);
    assert.equal(await text(await s.get('datasets/d1/uploads/j1')), 'a,b\n1,2\n');
    await s.put('datasets/d1/exports/1.csv', Readable.from(['x']), opts);
    await s.put('datasets/d10/exports/1.csv', Readable.from(['y']), opts);
    assert.deepEqual(
      (await s.list('datasets/d1/')).map((o) => o.key),
      ['datasets/d1/exports/1.csv', 'datasets/d1/uploads/j1'],
    );
    await s.delete('datasets/d1/uploads/j1');
    await s.delete('datasets/d1/uploads/j1');
    assert.equal(await s.head('datasets/d1/uploads/j1'), null);
    await assert.rejects(s.get('datasets/d1/uploads/j1'), ObjectNotFound);
    await s.deletePrefix('datasets/d1/');
    assert.deepEqual(await s.list('datasets/d1/'), []);
    // A sibling whose name merely starts the same is untouched.
    assert.deepEqual(
      (await s.list('datasets/d10/')).map((o) => o.key),
      ['datasets/d10/exports/1.csv'],
    );
  });

  it('streams an object larger than one multipart upload part', async () => {
    const chunk = Buffer.alloc(1024 * 1024, 'z');
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < 12; i++) yield chunk;
      })(),
    );
    const info = await store().put('datasets/big/uploads/j', body, {
      contentType: 'text/csv',
      maxBytes: 20e6,
    });
    assert.equal(info.size, 12 * 1024 * 1024);
    assert.equal((await store().head('datasets/big/uploads/j'))?.size, 12 * 1024 * 1024);
    let read = 0;
    for await (const c of await store().get('datasets/big/uploads/j')) read += (c as Buffer).length;
    assert.equal(read, 12 * 1024 * 1024);
  });

  it('leaves nothing behind when the stream is too large or fails', async () => {
    const s = store();
    await assert.rejects(
      s.put('datasets/d2/uploads/big', Readable.from(['x'.repeat(60), 'y'.repeat(60)]), opts),
      ObjectTooLarge,
    );
    await assert.rejects(s.put('datasets/d2/uploads/cut', failingStream(), opts), /client went away/);
    assert.equal(await s.head('datasets/d2/uploads/big'), null);
    assert.deepEqual(await s.list('datasets/d2/'), []);
  });

  it('deletes more objects than one DeleteObjects request takes', async () => {
    const s = store();
    const keys = Array.from(
      { length: 1005 },
      (_, i) => `datasets/d6/exports/${String(i).padStart(4, '0')}.csv`,
    );
    for (let i = 0; i < keys.length; i += 200) {
      await Promise.all(keys.slice(i, i + 200).map((k) => s.put(k, Readable.from(['x']), opts)));
    }
    assert.equal((await s.list('datasets/d6/')).length, 1005);
    await s.deletePrefix('datasets/d6/');
    assert.deepEqual(await s.list('datasets/d6/'), []);
  });
}

describe('object store: local files', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-objects-'));
  const store = new LocalObjectStore(dir);
  after(() => rmSync(dir, { recursive: true, force: true }));

  objectStoreCases(() => store);

  it('keeps objects readable by the service’s user only: files 0600, folders 0700', async () => {
    await store.put('datasets/m1/uploads/j1', Readable.from(['a,b\n']), opts);
    assert.equal(statSync(join(dir, 'datasets/m1/uploads/j1')).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'datasets/m1/uploads')).mode & 0o777, 0o700);
  });

  it('leaves no temporary file behind a failed put', async () => {
    await assert.rejects(
      store.put('datasets/t1/uploads/big', Readable.from(['x'.repeat(60), 'y'.repeat(60)]), opts),
      ObjectTooLarge,
    );
    await assert.rejects(store.put('datasets/t1/uploads/cut', failingStream(), opts), /client went away/);
    assert.deepEqual(readdirSync(join(dir, '.tmp')), []);
  });

  it('removes the partial file a put cut off by a crash left, once untouched long enough', async () => {
    const tmp = join(dir, '.tmp');
    mkdirSync(tmp, { recursive: true });
    writeFileSync(join(tmp, 'crashed'), 'id,name\n1,');
    writeFileSync(join(tmp, 'recent'), 'id,name\n');
    const longAgo = new Date(Date.now() - 3_600_000);
    utimesSync(join(tmp, 'crashed'), longAgo, longAgo);
    assert.equal(await store.removeAbandonedPuts(Date.now() - 600_000), 1);
    assert.deepEqual(readdirSync(tmp), ['recent']);
    rmSync(join(tmp, 'recent'));
  });
});

describe('object store: S3', () => {
  let s3: TestS3;
  let store: S3ObjectStore;
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

  objectStoreCases(() => store);

  it('presigns a PUT that a plain HTTP client can use, for an hour, signing only the host', async () => {
    const key = 'datasets/d3/uploads/j3';
    const before = Date.now();
    const signed = await store.presignPut(key, { expiresInSeconds: 3600 });
    const url = new URL(signed.url);
    assert.equal(url.origin, s3.endpoint);
    assert.equal(url.pathname, `/${s3.bucket}/${key}`);
    assert.equal(url.searchParams.get('X-Amz-Algorithm'), 'AWS4-HMAC-SHA256');
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

  it('refuses a presigned PUT sent with an Authorization header (400): why S3_TRANSFERS=service exists', async () => {
    const signed = await store.presignPut('datasets/t3/uploads/j', { expiresInSeconds: 60 });
    const res = await fetch(signed.url, {
      method: 'PUT',
      headers: { 'content-type': 'text/csv', authorization: 'Bearer dx_partner_token' },
      body: 'id\n1\n',
    });
    assert.equal(res.status, 400);
    assert.equal(await store.head('datasets/t3/uploads/j'), null);
  });

  it('refuses keys and prefixes that could name the whole bucket', async () => {
    await assert.rejects(store.deletePrefix(''), /invalid object prefix/);
    await assert.rejects(store.deletePrefix('/'), /invalid object prefix/);
    await assert.rejects(store.list('datasets'), /invalid object prefix/);
    await assert.rejects(store.get(''), /invalid object key/);
  });
});

describe('object store: S3, what a store that verifies signatures refuses', { skip: realStoreOnly() }, () => {
  let s3: TestS3;
  let store: S3ObjectStore;
  /** A store of the same bucket whose requests are signed with `credentials`. */
  const storeWith = (credentials: { accessKeyId: string; secretAccessKey: string }) =>
    new S3ObjectStore({
      bucket: s3.bucket,
      region: 'us-east-1',
      endpoint: s3.endpoint,
      publicEndpoint: null,
      forcePathStyle: true,
      transfers: 'direct',
      credentials,
    });
  const put = (url: string | URL, body = 'id\n1\n', headers: Record<string, string> = {}) =>
    fetch(url, { method: 'PUT', headers: { 'content-type': 'text/csv', ...headers }, body });
  before(async () => {
    s3 = await startS3();
    store = storeWith({
      accessKeyId: S3_TEST_CREDENTIALS.AWS_ACCESS_KEY_ID,
      secretAccessKey: S3_TEST_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
    });
  });
  after(async () => {
    store.destroy();
    await s3.close();
  });

  // In S3_TRANSFERS=direct the signature is the only thing that holds a client to its own upload.
  it('refuses a presigned PUT whose key, expiry or signature was changed (403), writing nothing', async () => {
    const signed = new URL(
      (await store.presignPut('datasets/t1/uploads/mine', { expiresInSeconds: 60 })).url,
    );
    const otherKey = new URL(signed);
    otherKey.pathname = `/${s3.bucket}/datasets/t1/uploads/someone-elses`;
    const longer = new URL(signed);
    longer.searchParams.set('X-Amz-Expires', '604800');
    const forged = new URL(signed);
    const signature = forged.searchParams.get('X-Amz-Signature') ?? '';
    forged.searchParams.set(
      'X-Amz-Signature',
      `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`,
    );
    for (const [what, url] of Object.entries({ otherKey, longer, forged })) {
      const res = await put(url);
      assert.equal(res.status, 403, what);
      assert.match(await res.text(), /SignatureDoesNotMatch|AccessDenied/, what);
    }
    assert.deepEqual(await store.list('datasets/t1/'), []);
    // The URL as signed still works: the refusals were the changes'.
    assert.equal((await put(signed)).status, 200);
    assert.equal((await store.head('datasets/t1/uploads/mine'))?.size, 5);
  });

  it('refuses a presigned URL used with another method: a PUT URL cannot read, a GET URL cannot write', async () => {
    await store.put('datasets/t2/uploads/j', Readable.from(['id\n1\n']), opts);
    const putUrl = (await store.presignPut('datasets/t2/uploads/j', { expiresInSeconds: 60 })).url;
    const getUrl = (await store.presignGet('datasets/t2/uploads/j', { expiresInSeconds: 60 })).url;
    assert.equal((await fetch(putUrl)).status, 403);
    assert.equal((await put(getUrl, 'overwritten\n')).status, 403);
    assert.equal((await fetch(getUrl, { method: 'DELETE' })).status, 403);
    assert.equal(await text(await store.get('datasets/t2/uploads/j')), 'id\n1\n');
    // A GET URL reads its own key only.
    const other = new URL(getUrl);
    other.pathname = other.pathname.replace(/\/j$/, '/k');
    await store.put('datasets/t2/uploads/k', Readable.from(['secret\n']), opts);
    assert.equal((await fetch(other)).status, 403);
  });

  it('with a wrong secret or an unknown key every call fails with the store’s refusal, never “not found”', async () => {
    await store.put('datasets/t4/uploads/j', Readable.from(['id\n1\n']), opts);
    const wrong = [
      storeWith({ accessKeyId: S3_TEST_CREDENTIALS.AWS_ACCESS_KEY_ID, secretAccessKey: 'not-the-secret' }),
      storeWith({ accessKeyId: 'DXUNKNOWNKEY', secretAccessKey: S3_TEST_CREDENTIALS.AWS_SECRET_ACCESS_KEY }),
    ];
    try {
      for (const s of wrong) {
        // A refused HEAD read as "absent" would let the expiry sweep fail a job whose file is there.
        await assert.rejects(
          s.head('datasets/t4/uploads/j'),
          (err: Error) => !(err instanceof ObjectNotFound),
        );
        await assert.rejects(
          s.get('datasets/t4/uploads/j'),
          (err: Error) => !(err instanceof ObjectNotFound),
        );
        await assert.rejects(
          s.put('datasets/t4/uploads/x', Readable.from(['x']), opts),
          /SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied/,
        );
        await assert.rejects(s.list('datasets/t4/'));
        await assert.rejects(s.deletePrefix('datasets/t4/'));
        const presigned = await s.presignPut('datasets/t4/uploads/y', { expiresInSeconds: 60 });
        assert.equal((await put(presigned.url)).status, 403);
      }
    } finally {
      for (const s of wrong) s.destroy();
    }
    assert.deepEqual(
      (await store.list('datasets/t4/')).map((o) => o.key),
      ['datasets/t4/uploads/j'],
    );
  });
});
