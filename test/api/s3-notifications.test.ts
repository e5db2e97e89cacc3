// The bucket-notification webhook (STORAGE=s3, S3_NOTIFICATION_TOKEN set, polling slowed to an
// hour so only notifications can queue a job): authentication, the shapes accepted, exactly-once
// queueing under repeated and concurrent notifications, and uploads that beat their URL's expiry;
// the tests replay the events the store sent them. Then, on a real store (Ceph RGW), the wiring
// deploy/README.md gives: the store itself POSTs to the API, and the upload is loaded.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { expireUploads } from '../../src/domain/jobs/uploads.js';
import { realStoreOnly, type S3EventRecord } from '../support/s3-server.js';
import { forEachDatabase, onDatabase } from '../support/databases.js';
import { startFixtureOnS3, type S3Fixture } from '../support/fixture.js';
import { allRecords, putFile, requestUpload } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
const TOKEN = 'notify-'.padEnd(40, 'x');

await forEachDatabase('S3 bucket notifications', (target) => {
  let h: S3Fixture;
  const events: S3EventRecord[] = [];
  before(async () => {
    h = await startFixtureOnS3(target, {
      S3_TRANSFERS: 'direct',
      S3_POLL_MS: '3600000',
      S3_NOTIFICATION_TOKEN: TOKEN,
    });
    await h.s3.onEvent((e) => events.push(e));
  });
  after(() => h.close());

  const notify = async (body: unknown, auth: string | null = `Bearer ${TOKEN}`, query = '') => {
    const res = await fetch(`${h.baseUrl}/api/v1/storage/notifications${query}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(auth !== null ? { authorization: auth } : {}) },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as { received: number; queued: number } };
  };
  const statusOf = async (jobId: string) =>
    (await h.api<{ currentStatus: { status: string } }>('GET', `/datasets/jobs/${jobId}`)).json.currentStatus
      .status;
  const queuedEntries = async (jobId: string) =>
    (await h.api<{ data: { status: string }[] }>('GET', `/datasets/jobs/${jobId}/logs`)).json.data.filter(
      (l) => l.status === 'Queued',
    ).length;
  /** An upload URL with its file PUT, and the S3 event the store emitted for it. */
  const uploaded = async (body = 'id,name\n1,a\n') => {
    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    const key = `datasets/${id}/uploads/${up.jobId}`;
    const put = await putFile(up.url, body);
    assert.equal(put.status, 200);
    // The store's event comes through s3rver's stdout, or RGW's POST to the tests: give it a moment.
    let event: S3EventRecord | undefined;
    for (let i = 0; i < 100 && event === undefined; i++) {
      event = events.find((e) => e.Records[0]?.s3.object.key === key);
      if (event === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(event, `the store sent no event for ${key}`);
    return { id, jobId: up.jobId, key, event };
  };

  void it('refuses a missing or wrong token with a 401 problem, before reading the body', async () => {
    const { jobId, event } = await uploaded();
    for (const auth of [null, 'Bearer wrong', `Bearer ${TOKEN}x`, `Token ${TOKEN}`, 'Basic Og==']) {
      const res = await notify(event, auth);
      assert.equal(res.status, 401, String(auth));
    }
    assert.equal((await notify(event, null, '?token=nope')).status, 401);
    assert.equal(await statusOf(jobId), 'Created');
  });

  void it('an S3 event queues the job once; repeats and concurrent copies queue nothing more', async () => {
    const { jobId, event } = await uploaded();
    const results = await Promise.all(Array.from({ length: 6 }, () => notify(event)));
    for (const r of results) assert.equal(r.status, 200);
    assert.equal(
      results.reduce((n, r) => n + r.json.queued, 0),
      1,
    );
    assert.ok(results.every((r) => r.json.received === 1));
    const job = await h.waitForJob(jobId);
    assert.equal(job.currentStatus.status, 'Completed');
    assert.deepEqual((await notify(event)).json, { received: 1, queued: 0 });
    assert.equal(await queuedEntries(jobId), 1);
  });

  void it('accepts the EventBridge shape, and Pub/Sub push with the token in the query', async () => {
    const a = await uploaded();
    const eventBridge = {
      'detail-type': 'Object Created',
      source: 'aws.s3',
      detail: { bucket: { name: h.s3.bucket }, object: { key: a.key, size: 12 } },
    };
    assert.deepEqual((await notify(eventBridge)).json, { received: 1, queued: 1 });
    const b = await uploaded();
    const pubSub = {
      message: {
        attributes: { bucketId: h.s3.bucket, objectId: b.key, eventType: 'OBJECT_FINALIZE' },
        data: '',
      },
      subscription: 'projects/p/subscriptions/dx',
    };
    assert.deepEqual((await notify(pubSub, null, `?token=${TOKEN}`)).json, { received: 1, queued: 1 });
    const basic = `Basic ${Buffer.from(`minio:${TOKEN}`).toString('base64')}`;
    assert.equal((await notify(pubSub, basic)).status, 200);
    for (const jobId of [a.jobId, b.jobId]) {
      assert.equal((await h.waitForJob(jobId)).currentStatus.status, 'Completed');
    }
  });

  void it('ignores other buckets, unknown keys, and keys whose file is not there', async () => {
    const { jobId, event } = await uploaded();
    const otherBucket = structuredClone(event);
    for (const r of otherBucket.Records) r.s3.bucket.name = 'someone-else';
    assert.deepEqual((await notify(otherBucket)).json, { received: 0, queued: 0 });
    // A notification is only a hint: without the object in the bucket nothing is queued.
    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    const forged = structuredClone(event);
    for (const r of forged.Records) r.s3.object.key = `datasets/${id}/uploads/${up.jobId}`;
    assert.deepEqual((await notify(forged)).json, { received: 1, queued: 0 });
    assert.equal(await statusOf(up.jobId), 'Created');
    const junk = {
      Records: [{ s3: { bucket: { name: h.s3.bucket }, object: { key: '../../etc/passwd' } } }],
    };
    assert.deepEqual((await notify(junk)).json, { received: 1, queued: 0 });
    assert.deepEqual((await notify({ hello: 'world' })).json, { received: 0, queued: 0 });
    assert.equal(await statusOf(jobId), 'Created');
  });

  void it('an upload that arrived before the URL expired is not expired by the sweep', async () => {
    const { jobId, event } = await uploaded();
    const db = h.database.db;
    await db
      .updateTable('dataset_jobs')
      .set({ upload_expires_at: Date.now() - 1000 })
      .where('id', '=', jobId)
      .execute();
    const deps = { db, objects: h.services.objects, records: h.services.records };
    assert.equal(await expireUploads(deps, Date.now()), 0);
    assert.equal(await statusOf(jobId), 'Created');
    assert.deepEqual((await notify(event)).json, { received: 1, queued: 1 });
    assert.equal((await h.waitForJob(jobId)).currentStatus.status, 'Completed');
    // Without a file, the sweep does expire the job.
    const id = await h.defineDataset(PROPS, ['id']);
    const unused = await requestUpload(h, id);
    await db
      .updateTable('dataset_jobs')
      .set({ upload_expires_at: Date.now() - 1000 })
      .where('id', '=', unused.jobId)
      .execute();
    assert.equal(await expireUploads(deps, Date.now()), 1);
    assert.equal(await statusOf(unused.jobId), 'Expired');
  });
});

await onDatabase('postgres', 'S3 bucket notifications sent by the store itself', (target) => {
  // A non-persistent topic is delivered during the PUT; a persistent one from RGW's queue, later.
  for (const persistent of [false, true]) {
    describe(`a topic with persistent=${persistent}`, { skip: realStoreOnly() }, () => {
      let h: S3Fixture;
      before(async () => {
        h = await startFixtureOnS3(target, {
          S3_TRANSFERS: 'direct',
          S3_POLL_MS: '3600000',
          S3_NOTIFICATION_TOKEN: TOKEN,
        });
        await h.s3.notifyTo(`${h.baseUrl}/api/v1/storage/notifications?token=${TOKEN}`, { persistent });
      });
      after(() => h.close());

      void it('a PUT to the upload URL is announced by the store, and loaded without polling', async () => {
        const id = await h.defineDataset(PROPS, ['id']);
        const up = await requestUpload(h, id);
        assert.equal((await putFile(up.url, 'id,name\n1,a\n2,b\n')).status, 200);
        // RGW's persistent queues are looked at every few seconds, and a new one found within 30.
        const job = await h.waitForJob(up.jobId, 60_000);
        assert.equal(job.currentStatus.status, 'Completed');
        assert.equal((await allRecords(h, id)).length, 2);
      });
    });
  }
});
