// The client package (@dataset-exchange/client) against the running service on both engines: the
// whole partner flow from an app key to the records, resumable uploads, load options, and the
// service's refusals as typed problems.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DxApp,
  DxProblemError,
  isDxProblem,
  type DxClient,
  type NewDataset,
  type UploadProgress,
} from '@dataset-exchange/client';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { onboardApp, type TestPartner } from '../support/onboarding.js';

const SCHEMA: NewDataset['schema'] = {
  properties: [
    { name: 'id', type: 'integer', required: true },
    { name: 'name', type: 'string' },
    { name: 'active', type: 'boolean' },
  ],
  primaryKey: ['id'],
};
const rows = (from: number, to: number) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${from + i},N${from + i},${(from + i) % 2 === 0}`).join(
    '\n',
  );

async function text(stream: ReadableStream<Uint8Array>): Promise<string> {
  return new Response(stream).text();
}

await forEachDatabase('client package', (target) => {
  let h: Fixture;
  let partner: TestPartner;
  let app: DxApp;
  let dx: DxClient;
  before(async () => {
    h = await startFixture(target, { LOAD_URL_ALLOWLIST: '127.0.0.1/32', UPLOAD_MAX_BYTES: '200000' });
    partner = await onboardApp(h, 'Client partner', 'RS256');
    app = new DxApp({ baseUrl: h.baseUrl, appId: partner.app.id, privateKey: partner.privateKeyPem });
  });
  after(() => h.close());

  void it('walks the partner flow: JWT, installations, token, dataset, upload, poll, pages, retrieve', async () => {
    const installations = await app.installations();
    const own = installations.find((i) => i.installationId === partner.installationId);
    assert.ok(own, JSON.stringify(installations));
    assert.equal(own.platformAppId, partner.app.id);

    dx = app.installation(own.installationId, partner.workspaceKey);
    const me = await dx.me();
    assert.equal(me.platformAppId, partner.app.id);

    const created = await dx.createDataset({
      name: 'Voters',
      description: 'from the client',
      schema: SCHEMA,
    });
    assert.equal(created.name, 'Voters');
    assert.deepEqual(created.datasetSchema.primaryKey, ['id']);
    assert.ok((await dx.listDatasets()).some((d) => d.datasetId === created.datasetId));
    const renamed = await dx.updateDataset(created.datasetId, { name: 'Voters 2024' });
    assert.equal(renamed.name, 'Voters 2024');
    assert.equal((await dx.getDataset(created.datasetId)).name, 'Voters 2024');

    const file = join(h.config.dataDir, 'voters.csv');
    writeFileSync(file, `id,name,active\n${rows(1, 25)}\n`);
    const progress: UploadProgress[] = [];
    const upload = await dx.upload(
      created.datasetId,
      { path: file },
      { onProgress: (p) => progress.push(p) },
    );
    assert.equal(upload.datasetId, created.datasetId);
    assert.ok(progress.length > 0);
    assert.deepEqual(progress.at(-1), { bytesSent: upload.bytes, bytesTotal: upload.bytes });

    const polled: string[] = [];
    const result = await dx.waitForJob(upload.jobId, {
      onPoll: (job) => polled.push(job.currentStatus.status),
    });
    assert.equal(result.status, 'Completed', JSON.stringify(result.job.currentStatus));
    if (result.status !== 'Completed') return;
    assert.equal(result.log.rowsLoaded, 25);
    assert.equal(result.errorCount, 0);
    assert.equal(result.rejectedRowsUrl, null);
    assert.equal(polled.at(-1), 'Completed');

    const pages: number[] = [];
    for await (const page of dx.recordPages(created.datasetId, { pageSize: 10 }))
      pages.push(page.data.length);
    assert.deepEqual(pages, [10, 10, 5]);
    const ids: unknown[] = [];
    for await (const record of dx.records(created.datasetId, { pageSize: 7 })) ids.push(record.id);
    assert.deepEqual(
      ids,
      Array.from({ length: 25 }, (_, i) => i + 1),
    );
    const active: unknown[] = [];
    for await (const r of dx.records(created.datasetId, { filters: { active: true, id: 4 } })) active.push(r);
    assert.deepEqual(active, [{ id: 4, name: 'N4', active: true }]);

    const csv = await text(await dx.downloadRecords(created.datasetId));
    assert.equal(csv.split('\r\n')[0], 'id,name,active');
    assert.equal(csv.trimEnd().split('\r\n').length, 26);
    const ndjson = await text(await dx.downloadRecords(created.datasetId, 'json'));
    assert.deepEqual(JSON.parse(ndjson.split('\n')[0] ?? ''), { id: 1, name: 'N1', active: false });

    // A schema change: previewed (nothing changes), then made; the records follow it.
    const schema = {
      properties: [
        { name: 'id', type: 'integer' as const, required: true },
        { name: 'full_name', type: 'string' as const, renamedFrom: 'name' },
        { name: 'active', type: 'boolean' as const },
        { name: 'score', type: 'number' as const, required: true, default: 0.5 },
      ],
    };
    const report = await dx.previewSchemaChange(created.datasetId, schema);
    assert.deepEqual(
      report.changes.map((c) => c.kind),
      ['renamed', 'added'],
    );
    assert.equal(report.recordsTouched, 25);
    assert.equal((await dx.getDataset(created.datasetId)).schemaVersion, 1);
    const changed = await dx.updateDataset(created.datasetId, { schema });
    assert.equal(changed.schemaVersion, 2);
    const first: unknown[] = [];
    for await (const r of dx.records(created.datasetId, { filters: { id: 1 } })) first.push(r);
    assert.deepEqual(first, [{ id: 1, full_name: 'N1', active: false, score: 0.5 }]);
  });

  void it('uploads in resumable slices with progress, from a file, from memory and from a stream', async () => {
    const dataset = await dx.createDataset({ name: 'Resumable', schema: SCHEMA });
    const body = `id,name,active\n${rows(1, 400)}\n`;
    const file = join(h.config.dataDir, 'big.csv');
    writeFileSync(file, body);
    const progress: UploadProgress[] = [];
    const fromFile = await dx.upload(
      dataset.datasetId,
      { path: file },
      { resumable: true, chunkSize: 1000, onProgress: (p) => progress.push(p), mode: 'replace' },
    );
    assert.ok(fromFile.url.includes(`/uploads/${fromFile.jobId}`));
    assert.equal(fromFile.bytes, Buffer.byteLength(body));
    // One report per slice the service took, the last when it completes the file.
    assert.equal(progress.length, Math.ceil(Buffer.byteLength(body) / 1000));
    assert.deepEqual(progress[0], { bytesSent: 1000, bytesTotal: fromFile.bytes });
    assert.equal(progress.at(-1)?.bytesSent, fromFile.bytes);
    const job = await dx.getJob(fromFile.jobId);
    assert.equal(job.uploadType, 'resumable');
    const done = await dx.waitForJob(fromFile.jobId);
    assert.equal(done.status, 'Completed', JSON.stringify(done.job.currentStatus));

    const fromMemory = await dx.load(
      dataset.datasetId,
      { data: `id,name,active\n${rows(1, 3)}\n` },
      { resumable: true, chunkSize: 10, mode: 'replace' },
    );
    assert.equal(fromMemory.status, 'Completed');
    assert.equal(fromMemory.log?.rowsLoaded, 3);

    // A stream of unknown size: slices declare `*` until the last one names the total.
    async function* pieces() {
      for (const line of [`{"id":1,"name":"a"}\n`, `{"id":2,"name":"b"}\n`, `{"id":3,"name":"c"}\n`])
        yield new TextEncoder().encode(line);
    }
    const fromStream = await dx.load(
      dataset.datasetId,
      { stream: pieces() },
      { resumable: true, chunkSize: 15, format: 'json', mode: 'replace' },
    );
    assert.equal(fromStream.status, 'Completed', JSON.stringify(fromStream.job.currentStatus));
    assert.equal((await dx.getDataset(dataset.datasetId)).recordCount, 3);

    // The same stream in one PUT: no Content-Length, the body chunked.
    const chunked = await dx.load(
      dataset.datasetId,
      { stream: pieces() },
      { format: 'json', mode: 'append' },
    );
    assert.equal(chunked.status, 'Failed'); // append: the keys are held already, each a row error
    assert.equal(chunked.errorCount, 3);
    assert.equal(chunked.errors[0]?.property, 'id');
  });

  void it('passes the load options and returns row errors and the rejected-rows link', async () => {
    const dataset = await dx.createDataset({ name: 'Options', schema: SCHEMA });
    const bad = `id,name,active\n1,A,true\nx,B,false\n3,C,maybe\n4,D,true\n`;
    const dry = await dx.load(dataset.datasetId, { data: bad }, { dryRun: true, maxBadRecords: 2 });
    assert.equal(dry.status, 'Completed');
    assert.equal(dry.job.dryRun, true);
    assert.equal(dry.job.maxBadRecords, 2);
    assert.match(dry.message, /^Dry run/);
    assert.equal(dry.errorCount, 2);
    assert.deepEqual(
      dry.errors.map((e) => [e.line, e.property]),
      [
        [3, 'id'],
        [4, 'active'],
      ],
    );
    assert.ok(dry.rejectedRowsUrl !== null);
    const rejected = await fetch(dry.rejectedRowsUrl);
    assert.match(await rejected.text(), /^line,property,message,originalText\r\n3,id,/);
    assert.equal((await dx.getDataset(dataset.datasetId)).recordCount, 0);

    const failed = await dx.load(dataset.datasetId, { data: bad }, { maxBadRecords: 1 });
    assert.equal(failed.status, 'Failed');
    assert.equal(failed.errorCount, 2);
    const all = [];
    for await (const e of dx.jobErrors(failed.jobId, { pageSize: 1 })) all.push(e.line);
    assert.deepEqual(all, [3, 4]);

    const loaded = await dx.load(dataset.datasetId, { data: bad }, { maxBadRecords: 2 });
    assert.equal(loaded.status, 'Completed');
    assert.equal(loaded.log.rowsLoaded, 2);
    assert.equal(loaded.log.rowsRejected, 2);

    const upsert = await dx.load(
      dataset.datasetId,
      { data: 'id,name,active\n4,D2,false\n5,E,true\n' },
      { mode: 'upsert' },
    );
    assert.equal(upsert.status, 'Completed');
    assert.equal(upsert.log.recordsReplaced, 1);
    assert.equal(upsert.log.recordsAdded, 1);
    const append = await dx.load(
      dataset.datasetId,
      { data: 'id,name,active\n6,F,true\n' },
      { mode: 'append' },
    );
    assert.equal(append.status, 'Completed');
    assert.equal((await dx.getDataset(dataset.datasetId)).recordCount, 4);

    // records:load from a URL: the export link of this very dataset.
    const copy = await dx.createDataset({ name: 'Copy', schema: SCHEMA });
    const { url } = await dx.retrieveRecords(dataset.datasetId, 'csv');
    const key = `copy-${Date.now()}`;
    const started = await dx.loadFromUrl(copy.datasetId, url, { idempotencyKey: key });
    const again = await dx.loadFromUrl(copy.datasetId, url, { idempotencyKey: key });
    assert.equal(again.jobId, started.jobId);
    const fromUrl = await dx.waitForJob(started.jobId);
    assert.equal(fromUrl.status, 'Completed', JSON.stringify(fromUrl.job.currentStatus));
    assert.equal((await dx.getDataset(copy.datasetId)).recordCount, 4);
    assert.ok((await dx.listJobs(copy.datasetId)).some((j) => j.datasetJobId === started.jobId));

    // mode: 'delete' takes a file of keys; its counts are typed like every other.
    const optOut = await dx.load(copy.datasetId, { data: 'id\n6\n99\n' }, { mode: 'delete' });
    assert.equal(optOut.status, 'Completed', JSON.stringify(optOut.job.currentStatus));
    assert.equal(optOut.job.mode, 'delete');
    const deleted: number | undefined = optOut.log.recordsDeleted;
    const notFound: number | undefined = optOut.log.keysNotFound;
    assert.deepEqual([deleted, notFound], [1, 1]);
    assert.equal((await dx.getDataset(copy.datasetId)).recordCount, 3);
  });

  void it('throws the service refusals as DxProblemError with status, type, title and detail', async () => {
    const missing = await dx.getDataset('no-such-dataset').catch((e: unknown) => e);
    assert.ok(missing instanceof DxProblemError, String(missing));
    assert.equal(missing.status, 404);
    assert.match(missing.type, /rfc9110#section-15\.5\.5$/);
    assert.equal(missing.title, 'Not Found');
    assert.ok(missing.detail !== undefined && missing.detail.length > 0);
    assert.ok(missing.traceId !== undefined);
    assert.equal(missing.request, 'GET /api/v1/datasets/no-such-dataset');

    const invalid = await dx
      .createDataset({ name: 'Bad', schema: { properties: [{ name: '1x', type: 'string' }] } })
      .catch((e: unknown) => e);
    assert.ok(isDxProblem(invalid, 400));
    assert.ok(
      invalid.errors !== undefined && Object.keys(invalid.errors).length > 0,
      JSON.stringify(invalid),
    );

    const dataset = await dx.createDataset({ name: 'Full', schema: SCHEMA });
    await dx.load(dataset.datasetId, { data: 'id,name,active\n1,A,true\n' });
    const conflict = await dx.upload(dataset.datasetId, { data: 'id\n2\n' }).catch((e: unknown) => e);
    assert.ok(isDxProblem(conflict, 409), String(conflict));

    const readOnly = app.installation(partner.installationId, partner.workspaceKey, {
      permissions: ['datasets:read'],
    });
    assert.equal((await readOnly.getDataset(dataset.datasetId)).datasetId, dataset.datasetId);
    const forbidden = await readOnly.deleteDataset(dataset.datasetId).catch((e: unknown) => e);
    assert.ok(isDxProblem(forbidden, 403), String(forbidden));

    const wrongKey = await app.clientToken(partner.installationId, 'wsk_wrong').catch((e: unknown) => e);
    assert.ok(isDxProblem(wrongKey), String(wrongKey));
    assert.ok([401, 403].includes(wrongKey.status));

    // Past UPLOAD_MAX_BYTES the service answers 413 at once and closes: still a typed problem.
    const big = `id,name,active\n${rows(1, 20000)}\n`;
    for (const resumable of [false, true]) {
      const tooLarge = await dx
        .upload(dataset.datasetId, { data: big }, { mode: 'replace', resumable })
        .catch((e: unknown) => e);
      assert.ok(isDxProblem(tooLarge, 413), `resumable=${resumable}: ${String(tooLarge)}`);
      assert.match(tooLarge.request, /^PUT \/uploads\/[^?]+$/);
    }

    await dx.deleteDataset(dataset.datasetId);
    const gone = await dx.getDataset(dataset.datasetId).catch((e: unknown) => e);
    assert.ok(isDxProblem(gone, 404));
  });

  void it('manages dataset tags', async () => {
    const dataset = await dx.createDataset({ name: 'Tagged', schema: SCHEMA });
    const candidates = await dx.tagCandidates();
    assert.ok(
      candidates.some((c) => c.platformAppId === partner.app.id),
      JSON.stringify(candidates),
    );
    const tagged = await dx.getDataset(dataset.datasetId);
    const own = tagged.datasetTags.find((t) => t.platformAppId === partner.app.id);
    assert.ok(own, JSON.stringify(tagged.datasetTags));
  });
});
