// Signed upload URLs: expiry, tampering, reuse, media types, size limit, job visibility.
import { after, before, it } from 'node:test';
import { request as httpRequest } from 'node:http';
import assert from 'node:assert/strict';
import { signUrl } from '../../src/lib/signed-url.js';
import { nowSeconds } from '../../src/lib/time.js';
import { resolveSigningSecret } from '../../src/runtime/signing-secret.js';
import { expireUploads } from '../../src/domain/jobs/uploads.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type JobBody } from '../support/fixture.js';
import { putFile, requestUpload } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];

await forEachDatabase('upload URLs', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target, { UPLOAD_MAX_BYTES: '200' });
  });
  after(() => h.close());

  const newUpload = async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    return { ...(await requestUpload(h, id)), id };
  };

  void it('answers 403 to a tampered URL and 409 to a reused one', async () => {
    const { url, jobId } = await newUpload();
    const tampered = await putFile(
      url.replace(/signature=([^&])/, (_m, c: string) => `signature=${c === 'A' ? 'B' : 'A'}`),
      'id,name\n1,a\n',
    );
    assert.equal(tampered.status, 403);
    assert.match(tampered.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const other = await putFile(url.replace(jobId, '00000000-0000-4000-8000-000000000000'), 'id,name\n1,a\n');
    assert.equal(other.status, 403);
    assert.equal((await putFile(url, 'id,name\n1,a\n')).status, 200);
    const reused = await putFile(url, 'id,name\n2,b\n');
    assert.equal(reused.status, 409);
    const job = await h.waitForJob(jobId);
    assert.equal(job.currentStatus.status, 'Completed');
  });

  void it('answers 403 to an expired URL and the job ends Expired', async () => {
    const { jobId } = await newUpload();
    const past = nowSeconds() - 5;
    const expired = signUrl(resolveSigningSecret(h.config), h.baseUrl, 'PUT', `/uploads/${jobId}`, past);
    const res = await putFile(expired, 'id,name\n1,a\n');
    assert.equal(res.status, 403);
    assert.match(((await res.json()) as { detail: string }).detail, /expired/);
    const job = await h.api<JobBody>('GET', `/datasets/jobs/${jobId}`);
    assert.equal(job.json.currentStatus.status, 'Expired');
    assert.equal(job.json.currentStatus.datasetJobStatusCode, 6);
  });

  void it('expires unused upload jobs after the hour', async () => {
    const { jobId } = await newUpload();
    const db = h.database.db;
    const deps = { db, objects: h.services.objects, records: null as never };
    assert.equal(await expireUploads(deps, Date.now()), 0);
    assert.ok((await expireUploads(deps, Date.now() + 3601_000)) >= 1);
    const job = await h.api<JobBody>('GET', `/datasets/jobs/${jobId}`);
    assert.equal(job.json.currentStatus.status, 'Expired');
  });

  void it('answers 415 to other media types and 413 above the size limit, then accepts a retry', async () => {
    const { url, jobId } = await newUpload();
    assert.equal((await putFile(url, 'id,name\n1,a\n', 'text/plain')).status, 415);
    const big = `id,name\n${'1,aaaaaaaaaa\n'.repeat(30)}`;
    const tooBig = await putFile(url, big);
    assert.equal(tooBig.status, 413);
    const ok = await putFile(url, 'id,name\n1,a\n', 'application/octet-stream');
    assert.equal(ok.status, 200);
    assert.equal((await h.waitForJob(jobId)).currentStatus.status, 'Completed');
  });

  void it('lists jobs and their status entries; other tokens see 404', async () => {
    const { id, url, jobId } = await newUpload();
    assert.equal((await putFile(url, 'id,name\n1,a\n')).status, 200);
    await h.waitForJob(jobId);
    const logs = await h.api<{ metadata: { count: number }; data: { status: string }[] }>(
      'GET',
      `/datasets/jobs/${jobId}/logs`,
    );
    assert.deepEqual(
      logs.json.data.map((l) => l.status),
      ['Created', 'Queued', 'Running', 'Completed'],
    );
    const current = await h.api<{ status: string }>('GET', `/datasets/jobs/${jobId}/logs:current`);
    assert.equal(current.json.status, 'Completed');
    const list = await h.api<{ data: JobBody[] }>('GET', `/datasets/${id}/jobs`);
    assert.equal(list.json.data[0]?.datasetJobId, jobId);
    assert.equal(list.json.data[0]?.jobType, 'uploadUrl');
    assert.equal(list.json.data[0]?.contentType, 'csv');
    const stranger = await fetch(`${h.baseUrl}/api/v1/datasets/jobs/${jobId}`, {
      headers: { authorization: `Bearer ${await h.otherToken()}` },
    });
    assert.equal(stranger.status, 404);
    assert.equal((await h.api('GET', '/datasets/jobs/nope')).status, 404);
  });

  void it('answers 409 to mode=create on a dataset with records, and 400 to bad bodies', async () => {
    const { id, url, jobId } = await newUpload();
    assert.equal((await putFile(url, 'id,name\n1,a\n')).status, 200);
    await h.waitForJob(jobId);
    const again = await h.api('POST', `/datasets/${id}/uploadUrl`, { contentType: 'csv' });
    assert.equal(again.status, 409);
    const load = await h.api('POST', `/datasets/${id}/records:load?mode=create`, {
      url: 'https://example.com/a.csv',
    });
    assert.equal(load.status, 409);
    assert.equal(
      (await h.api('POST', `/datasets/${id}/uploadUrl?mode=replace`, { contentType: 'xml' })).status,
      400,
    );
    assert.equal(
      (await h.api('POST', `/datasets/${id}/uploadUrl?mode=merge`, { contentType: 'csv' })).status,
      400,
    );
    assert.equal(
      (await h.api('POST', `/datasets/${id}/records:load?mode=replace`, { url: 'ftp://x/y' })).status,
      400,
    );
  });

  void it('answers 413 to a chunked upload over the limit at once and closes the connection', async () => {
    const { url } = await newUpload();
    // A client that would go on sending for ever: the answer must reach it while it still sends,
    // and the server must close the connection rather than read (or wait for) the rest.
    const outcome = await new Promise<{ status: number; connection: string | undefined; closed: boolean }>(
      (resolve, reject) => {
        const req = httpRequest(url, { method: 'PUT', headers: { 'content-type': 'text/csv' } });
        let sent = 0;
        const pump = setInterval(() => {
          if (!req.destroyed) req.write(Buffer.alloc(64, 'a'));
          sent++;
          if (sent > 2000) {
            clearInterval(pump);
            reject(new Error('no answer while the client kept sending'));
          }
        }, 5);
        req.on('response', (res) => {
          res.resume();
          res.on('close', () => {
            clearInterval(pump);
            resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, closed: true });
          });
        });
        req.on('error', () => undefined);
      },
    );
    assert.equal(outcome.status, 413);
    assert.equal(outcome.connection, 'close');
  });
});
