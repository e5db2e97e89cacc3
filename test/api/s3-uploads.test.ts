// STORAGE=s3 through the public interface, against the tests' S3-compatible store: presigned
// upload URLs PUT to by a plain HTTP client, arrival noticed by polling, the size limit, presigned
// downloads of records:retrieve, a deleted dataset's files going too, and what a client that
// attaches its bearer token to an upload URL gets. On a real store, which verifies signatures:
// what a changed upload URL gets, and a load from the store's own presigned GET URL, sent exactly
// as signed.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { forEachDatabase } from '../support/databases.js';
import { eventually } from '../support/poll.js';
import { realStoreOnly } from '../support/s3-server.js';
import { startFixtureOnS3, type S3Fixture } from '../support/fixture.js';
import { allRecords, putFile, requestUpload } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];

/** Whether `key` is gone from the store within 10 s (the worker deletes a job's file after its end). */
const gone = (h: S3Fixture, key: string) =>
  eventually(async () => (await h.services.objects.head(key)) === null, 10_000);

await forEachDatabase('S3 storage, polling', (target) => {
  let h: S3Fixture;
  before(async () => {
    h = await startFixtureOnS3(target, {
      S3_TRANSFERS: 'direct',
      S3_POLL_MS: '100',
      UPLOAD_MAX_BYTES: '1000',
      // The store's own presigned URLs as sources of records:load.
      LOAD_URL_ALLOWLIST: '127.0.0.1/32',
    });
  });
  after(() => h.close());
  const statusOf = async (jobId: string) =>
    (await h.api<{ currentStatus: { status: string } }>('GET', `/datasets/jobs/${jobId}`)).json.currentStatus
      .status;

  void it('hands out the store’s presigned URL; a PUT to it is noticed and loaded', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    const url = new URL(up.url);
    assert.equal(url.origin, h.s3.endpoint);
    assert.equal(url.pathname, `/${h.s3.bucket}/datasets/${id}/uploads/${up.jobId}`);
    assert.equal(url.searchParams.get('X-Amz-Expires'), '3600');
    assert.ok(url.searchParams.has('X-Amz-Signature'));
    const created = await h.api<{ currentStatus: { status: string } }>('GET', `/datasets/jobs/${up.jobId}`);
    assert.equal(created.json.currentStatus.status, 'Created');

    const body = 'id,name\n1,ada\n2,bob\n2,bea\n';
    const res = await putFile(up.url, body);
    assert.equal(res.status, 200);
    const job = await h.waitForJob(up.jobId);
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job));
    assert.equal(job.currentStatus.logData?.rowsLoaded, 2);
    assert.equal(job.currentStatus.logData?.duplicatesCollapsed, 1);
    assert.deepEqual(await allRecords(h, id), [
      { id: 1, name: 'ada' },
      { id: 2, name: 'bea' },
    ]);
    const logs = await h.api<{ data: { status: string; logData: { message: string } }[] }>(
      'GET',
      `/datasets/jobs/${up.jobId}/logs`,
    );
    const names = logs.json.data.map((l) => l.status);
    assert.deepEqual(
      names.filter((n) => n === 'Queued'),
      ['Queued'],
      names.join(','),
    );
    assert.match(
      logs.json.data.find((l) => l.status === 'Queued')?.logData.message ?? '',
      new RegExp(`File received \\(${body.length} bytes, read as csv\\)`),
    );
    // The uploaded file is deleted once its job ended (by the worker, just after the job's end).
    assert.ok(await gone(h, `datasets/${id}/uploads/${up.jobId}`), 'the uploaded file is deleted');
  });

  void it('has no notification webhook without S3_NOTIFICATION_TOKEN', async () => {
    const res = await fetch(`${h.baseUrl}/api/v1/storage/notifications`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"Records":[]}',
    });
    assert.equal(res.status, 404);
  });

  void it('fails a job whose file is larger than UPLOAD_MAX_BYTES and deletes the file', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    const body = `id,name\n${Array.from({ length: 200 }, (_, i) => `${i},name${i}`).join('\n')}\n`;
    assert.ok(body.length > 1000);
    assert.equal((await putFile(up.url, body)).status, 200);
    const job = await h.waitForJob(up.jobId);
    assert.equal(job.currentStatus.status, 'Failed');
    assert.match(job.currentStatus.logData?.message ?? '', /larger than the limit of 1000 bytes/);
    assert.ok(await gone(h, `datasets/${id}/uploads/${up.jobId}`), 'the oversized file is deleted');
    assert.deepEqual(await allRecords(h, id), []);
  });

  void it('records:retrieve answers the service’s own link, streamed from the database, nothing in the bucket', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    await putFile(up.url, 'id,name\n1,"a, b"\n2,c\n');
    assert.equal((await h.waitForJob(up.jobId)).currentStatus.status, 'Completed');
    const csv = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
      contentType: 'csv',
    });
    assert.equal(csv.status, 200, csv.text);
    const url = new URL(csv.json.url);
    assert.notEqual(url.origin, h.s3.endpoint);
    assert.match(url.pathname, new RegExp(`^/downloads/${id}/\\d+\\.csv$`));
    const got = await fetch(csv.json.url);
    assert.equal(got.status, 200);
    assert.equal(await got.text(), 'id,name\r\n1,"a, b"\r\n2,c\r\n');
    const json = await h.api<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
      contentType: 'json',
    });
    const lines = (await (await fetch(json.json.url)).text()).trim().split('\n');
    assert.deepEqual(
      lines.map((l) => JSON.parse(l)),
      [
        { id: 1, name: 'a, b' },
        { id: 2, name: 'c' },
      ],
    );
    assert.deepEqual(await h.services.objects.list(`datasets/${id}/`), []);
  });

  void it('deleting a dataset deletes its files in the bucket, and no one else’s', async () => {
    const keep = await h.defineDataset(PROPS, ['id']);
    const keepUp = await requestUpload(h, keep);
    await putFile(keepUp.url, 'id,name\n9,z\n');
    await h.waitForJob(keepUp.jobId);
    // A file of each dataset in the bucket (as an upload's in flight): exports write none.
    const file = (datasetId: string) =>
      h.services.objects.put(`datasets/${datasetId}/uploads/in-flight`, Readable.from([Buffer.from('x')]), {
        contentType: 'text/csv',
        maxBytes: 10,
      });
    await h.api('POST', `/datasets/${keep}/records:retrieve`, { contentType: 'csv' });
    await file(keep);

    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    await putFile(up.url, 'id,name\n1,a\n');
    await h.waitForJob(up.jobId);
    await h.api('POST', `/datasets/${id}/records:retrieve`, { contentType: 'csv' });
    await h.api('POST', `/datasets/${id}/records:retrieve`, { contentType: 'json' });
    await file(id);
    // Only that file (the upload's went when its job ended; the pending URL has none yet).
    const pending = await requestUpload(h, id, { mode: 'replace' });
    assert.equal((await h.services.objects.list(`datasets/${id}/`)).length, 1);
    const del = await h.api('DELETE', `/datasets/${id}`);
    assert.equal(del.status, 204, del.text);
    assert.deepEqual(await h.services.objects.list(`datasets/${id}/`), []);
    assert.equal((await h.services.objects.list(`datasets/${keep}/`)).length, 1);
    const gone = await h.api('GET', `/datasets/jobs/${pending.jobId}`);
    assert.equal(gone.status, 404);
  });

  // With S3_TRANSFERS=direct the URL's signature is all that binds a client to its own upload.
  void it(
    'refuses an upload URL changed to another job’s key or a later expiry; no job is touched',
    { skip: realStoreOnly() },
    async () => {
      const mine = await requestUpload(h, await h.defineDataset(PROPS, ['id']));
      const theirDataset = await h.defineDataset(PROPS, ['id']);
      const theirs = await requestUpload(h, theirDataset);
      const toTheirs = new URL(mine.url);
      toTheirs.pathname = new URL(theirs.url).pathname;
      const longer = new URL(mine.url);
      longer.searchParams.set('X-Amz-Expires', '604800');
      for (const url of [toTheirs, longer]) {
        const res = await putFile(url.href, 'id,name\n1,mallory\n');
        assert.equal(res.status, 403, url.pathname);
      }
      await new Promise((r) => setTimeout(r, 300)); // three polling rounds
      assert.equal(await statusOf(theirs.jobId), 'Created');
      assert.equal(await statusOf(mine.jobId), 'Created');
      assert.equal(await h.services.objects.head(`datasets/${theirDataset}/uploads/${theirs.jobId}`), null);
      // The URL as handed out still works.
      assert.equal((await putFile(mine.url, 'id,name\n1,ada\n')).status, 200);
      assert.equal((await h.waitForJob(mine.jobId)).currentStatus.status, 'Completed');
    },
  );

  void it('a client that attaches its bearer token to the upload URL gets the store’s 400; the job waits', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    const res = await fetch(up.url, {
      method: 'PUT',
      headers: { authorization: `Bearer ${h.token}`, 'content-type': 'text/csv' },
      body: 'id,name\n1,a\n',
    });
    // What DXAPI clients do, hence S3_TRANSFERS=service for them (deploy/README.md).
    assert.equal(res.status, 400);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(await statusOf(up.jobId), 'Created');
    assert.equal((await putFile(up.url, 'id,name\n1,a\n')).status, 200);
    assert.equal((await h.waitForJob(up.jobId)).currentStatus.status, 'Completed');
  });

  void it(
    'records:load from the store’s presigned GET URL loads it as signed; a changed one fails with the store’s 403',
    { skip: realStoreOnly() },
    async () => {
      const presigned = h.services.objects.presigned;
      assert.ok(presigned);
      const key = 'partner-files/people.csv';
      await h.services.objects.put(key, Readable.from(['id,name\n1,ada\n2,bob\n']), {
        contentType: 'text/csv',
        maxBytes: 1000,
      });
      const { url } = await presigned.get(key, { expiresInSeconds: 300 });
      const load = async (source: string) => {
        const id = await h.defineDataset(PROPS, ['id']);
        const res = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load`, { url: source });
        assert.equal(res.status, 202, res.text);
        return { id, job: await h.waitForJob(res.json.jobId) };
      };
      const ok = await load(url);
      assert.equal(ok.job.currentStatus.status, 'Completed', JSON.stringify(ok.job.currentStatus));
      assert.equal((await allRecords(h, ok.id)).length, 2);
      const changed = new URL(url);
      changed.searchParams.set('X-Amz-Expires', '604800');
      const refused = await load(changed.href);
      assert.equal(refused.job.currentStatus.status, 'Failed');
      const message = refused.job.currentStatus.logData?.message ?? '';
      assert.match(message, /answered HTTP 403/);
      // The job's log names the URL without its query: no signature, no credential.
      assert.ok(!message.includes('X-Amz-'), message);
      await h.services.objects.delete(key);
    },
  );
});
