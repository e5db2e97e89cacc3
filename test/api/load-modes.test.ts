// mode=append, mode=upsert and mode=delete through HTTP: counts, values and recordCount exact, held
// keys as row errors, deletes by key (opt-out files, dry runs, bad keys, composite keys, retries),
// datasets without a key, readers that never see a mix, and loads of one dataset in order.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { transitionJob } from '../../src/domain/jobs/jobs.js';
import { loadJob } from '../../src/domain/jobs/load/run-load.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type Json } from '../support/fixture.js';
import { allRecords, putFile, requestUpload, uploadAndWait, type UploadOptions } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
/** A CSV of `id,name` rows. */
const csv = (rows: [number, string][]) =>
  `id,name\n${rows.map(([id, name]) => `${id},${name}`).join('\n')}\n`;
/** Rows `from..to` (inclusive) all named `name`. */
const range = (from: number, to: number, name: string): [number, string][] =>
  Array.from({ length: to - from + 1 }, (_, i) => [from + i, name]);

interface DatasetBody {
  recordCount: number;
  dateLastRecordUpdated: string | null;
}

await forEachDatabase('load modes', (target) => {
  let h: Fixture;
  let files: Server;
  let filesUrl = '';
  /** Held open until `openGate` is called: the body of /gated.csv after its first row. */
  let openGate: () => void = () => undefined;
  let gate: Promise<void> = Promise.resolve();
  let gatedBody = '';
  before(async () => {
    // Several jobs at once, so loads of one dataset run in order because of the claim, not by chance.
    h = await startFixture(target, { WORKER_CONCURRENCY: '4', LOAD_URL_ALLOWLIST: '127.0.0.1/32' });
    files = createServer((req, res) => {
      if (req.url === '/gated.csv') {
        res.writeHead(200, { 'content-type': 'text/csv' });
        const [head = '', ...rest] = gatedBody.split('\n');
        res.write(`${head}\n`);
        void gate.then(() => res.end(rest.join('\n')));
      } else if (req.url?.startsWith('/file.csv?')) {
        res.writeHead(200, { 'content-type': 'text/csv' });
        res.end(new URL(req.url, 'http://x').searchParams.get('body'));
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  after(async () => {
    openGate();
    files.closeAllConnections();
    await new Promise((resolve) => files.close(resolve));
    await h.close();
  });

  const dataset = async (id: string) => (await h.api<DatasetBody>('GET', `/datasets/${id}`)).json;
  const completed = async (
    id: string,
    body: string,
    mode: 'create' | 'append' | 'upsert' | 'replace' | 'delete',
    opts: Omit<UploadOptions, 'mode'> & { mediaType?: string } = {},
  ) => {
    const job = await uploadAndWait(h, id, body, { ...opts, mode });
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    assert.equal(job.mode, mode);
    return job;
  };

  void it('upsert adds new keys and replaces held ones; append adds new keys; counts exact', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 5, 'a')), 'create');
    const before = await dataset(id);
    assert.equal(before.recordCount, 5);

    // 4..7 overlap 4 and 5; 7 comes twice, and the last of it wins.
    const upsert = await completed(id, csv([...range(4, 7, 'b'), [7, 'b2']]), 'upsert');
    assert.deepEqual(upsert.currentStatus.logData, {
      message: 'Added 2 records and replaced 2; the dataset holds 7.',
      rowsRead: 5,
      rowsLoaded: 7,
      duplicatesCollapsed: 1,
      rowsRejected: 0,
      recordsAdded: 2,
      recordsReplaced: 2,
    });
    assert.deepEqual(await allRecords(h, id, 3), [
      { id: 1, name: 'a' },
      { id: 2, name: 'a' },
      { id: 3, name: 'a' },
      { id: 4, name: 'b' },
      { id: 5, name: 'b' },
      { id: 6, name: 'b' },
      { id: 7, name: 'b2' },
    ]);
    const afterUpsert = await dataset(id);
    assert.equal(afterUpsert.recordCount, 7);
    assert.ok(afterUpsert.dateLastRecordUpdated! > before.dateLastRecordUpdated!, 'date moved on');

    const append = await completed(
      id,
      csv([
        [9, 'c'],
        [8, 'c'],
        [9, 'c2'],
      ]),
      'append',
    );
    assert.deepEqual(append.currentStatus.logData, {
      message: 'Added 2 records and replaced 0; the dataset holds 9.',
      rowsRead: 3,
      rowsLoaded: 9,
      duplicatesCollapsed: 1,
      rowsRejected: 0,
      recordsAdded: 2,
      recordsReplaced: 0,
    });
    const records = await allRecords(h, id);
    assert.equal(records.length, 9);
    assert.deepEqual(records.slice(6), [
      { id: 7, name: 'b2' },
      { id: 8, name: 'c' },
      { id: 9, name: 'c2' },
    ]);
    const afterAppend = await dataset(id);
    assert.equal(afterAppend.recordCount, 9);
    assert.ok(afterAppend.dateLastRecordUpdated! > afterUpsert.dateLastRecordUpdated!, 'date moved on');
  });

  void it('counts in dx_job_rows_loaded_total the records each load wrote, not the dataset it left', async () => {
    const written = async () => {
      const metrics = await (await fetch(`${h.baseUrl}/metrics`)).text();
      return Number(/dx_job_rows_loaded_total\{type="uploadUrl"\} (\d+)/.exec(metrics)?.[1] ?? 0);
    };
    const id = await h.defineDataset(PROPS, ['id']);
    const start = await written();
    await completed(id, csv(range(1, 5, 'a')), 'create'); // 5 written
    await completed(id, csv(range(5, 6, 'b')), 'upsert'); // 5 replaced, 6 added: 2
    await completed(id, csv(range(7, 7, 'c')), 'append'); // 1
    await completed(id, 'id\n1\n2\n', 'delete'); // none written
    await completed(id, csv(range(1, 3, 'd')), 'replace'); // every record: 3
    assert.equal((await written()) - start, 11);
  });

  void it('append and upsert into a dataset that never had records load the file', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const append = await completed(
      id,
      csv([
        [2, 'x'],
        [1, 'y'],
      ]),
      'append',
    );
    assert.equal(
      append.currentStatus.logData?.message,
      'Added 2 records and replaced 0; the dataset holds 2.',
    );
    const other = await h.defineDataset(PROPS, ['id']);
    const upsert = await completed(
      other,
      csv([
        [2, 'x'],
        [2, 'z'],
      ]),
      'upsert',
    );
    assert.deepEqual(upsert.currentStatus.logData, {
      message: 'Added 1 records and replaced 0; the dataset holds 1.',
      rowsRead: 2,
      rowsLoaded: 1,
      duplicatesCollapsed: 1,
      rowsRejected: 0,
      recordsAdded: 1,
      recordsReplaced: 0,
    });
    assert.deepEqual(await allRecords(h, id), [
      { id: 1, name: 'y' },
      { id: 2, name: 'x' },
    ]);
    assert.deepEqual(await allRecords(h, other), [{ id: 2, name: 'z' }]);
  });

  void it('append: a key the dataset holds is a row error naming its line; the job fails, nothing changes', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 3, 'old')), 'create');
    const before = await dataset(id);
    const tables = await h.services.records.listTables(id);
    // Line 2 is new, lines 3 and 5 hold keys the dataset has, line 4 is a parse defect.
    const job = await uploadAndWait(h, id, 'id,name\n10,new\n2,again\nx,bad\n3,again\n', { mode: 'append' });
    assert.equal(job.currentStatus.status, 'Failed');
    const errors = job.currentStatus.errorData;
    assert.equal(errors?.errorCount, 3);
    const held = errors.errors.filter((e) => e.property === 'id' && /already holds/.test(e.message));
    assert.deepEqual(
      held.map((e) => e.line),
      [3, 5],
    );
    assert.equal(
      held[0]?.message,
      'The dataset already holds a record with primary key id=2; mode=append only adds new records (mode=upsert replaces them).',
    );
    assert.match(job.currentStatus.logData?.message ?? '', /3 defects in 4 records read; nothing was loaded/);
    // The rejected-rows file names each refused record with its values (the parser keeps no text
    // of a valid record: the line as read, typed, in the schema's order).
    assert.ok(job.rejectedRowsUrl, 'a rejected-rows link');
    const rejected = await (await fetch(job.rejectedRowsUrl)).text();
    assert.deepEqual(rejected.trimEnd().split('\r\n').slice(1), [
      '3,id,The dataset already holds a record with primary key id=2; mode=append only adds new records (mode=upsert replaces them).,"2,again"',
      '4,id,"""x"" is not an integer","x,bad"',
      '5,id,The dataset already holds a record with primary key id=3; mode=append only adds new records (mode=upsert replaces them).,"3,again"',
    ]);
    assert.deepEqual(
      await allRecords(h, id),
      range(1, 3, 'old').map(([i, name]) => ({ id: i, name })),
    );
    assert.deepEqual(await dataset(id), before);
    assert.deepEqual(await h.services.records.listTables(id), tables);
  });

  void it('delete: an opt-out file removes the records of its keys; keys the dataset lacks are counted', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 5, 'a')), 'create');
    const before = await dataset(id);
    // 9 is not in the dataset; 4 comes twice.
    const optOut = 'id\n2\n4\n9\n4\n';
    const job = await completed(id, optOut, 'delete');
    assert.deepEqual(job.currentStatus.logData, {
      message: 'Deleted 2 records; 1 key matched no record; the dataset holds 3.',
      rowsRead: 4,
      rowsLoaded: 3,
      duplicatesCollapsed: 1,
      rowsRejected: 0,
      recordsDeleted: 2,
      keysNotFound: 1,
    });
    const left = [1, 3, 5].map((i) => ({ id: i, name: 'a' }));
    assert.deepEqual(await allRecords(h, id, 2), left);
    const afterDelete = await dataset(id);
    assert.equal(afterDelete.recordCount, 3);
    assert.ok(afterDelete.dateLastRecordUpdated! > before.dateLastRecordUpdated!, 'date moved on');

    // The same file again: every key is missing now, which is no error.
    const again = await completed(id, optOut, 'delete');
    assert.equal(
      again.currentStatus.logData?.message,
      'Deleted 0 records; 3 keys matched no record; the dataset holds 3.',
    );
    assert.equal(again.currentStatus.logData?.recordsDeleted, 0);
    assert.equal(again.currentStatus.logData?.keysNotFound, 3);
    assert.deepEqual(await allRecords(h, id), left);

    // The other way in, records:load from a URL, and the last record too.
    const fromUrl = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load?mode=delete`, {
      url: `${filesUrl}/file.csv?body=${encodeURIComponent('id\n5\n1\n')}`,
    });
    assert.equal(fromUrl.status, 202, fromUrl.text);
    const loaded = await h.waitForJob(fromUrl.json.jobId);
    assert.equal(loaded.currentStatus.status, 'Completed', JSON.stringify(loaded.currentStatus));
    assert.equal(loaded.mode, 'delete');
    assert.equal(loaded.currentStatus.logData?.recordsDeleted, 2);
    assert.deepEqual(await allRecords(h, id), [{ id: 3, name: 'a' }]);
    assert.equal((await dataset(id)).recordCount, 1);
  });

  void it('delete: a dry run deletes nothing and reports what it would have done', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 5, 'a')), 'create');
    const before = await dataset(id);
    const tables = await h.services.records.listTables(id);
    const dry = await completed(id, 'id\n1\n2\n7\n', 'delete', { dryRun: true });
    assert.deepEqual(dry.currentStatus.logData, {
      message:
        'Dry run: 2 records would have been deleted; 1 key matched no record; the dataset would hold 3. Nothing was changed.',
      rowsRead: 3,
      rowsLoaded: 3,
      duplicatesCollapsed: 0,
      rowsRejected: 0,
      recordsDeleted: 2,
      keysNotFound: 1,
    });
    assert.equal((dry as unknown as { dryRun: boolean }).dryRun, true);
    assert.deepEqual(
      await allRecords(h, id),
      range(1, 5, 'a').map(([i, name]) => ({ id: i, name })),
    );
    assert.deepEqual(await dataset(id), before);
    assert.deepEqual(await h.services.records.listTables(id), tables);
  });

  void it('delete: malformed keys are row errors; maxBadRecords decides; a column outside the key is refused', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 5, 'a')), 'create');
    const before = await dataset(id);
    // Lines 3 and 5 are not integers.
    const file = 'id\n1\nabc\n3\n2.5\n';
    const failed = await uploadAndWait(h, id, file, { mode: 'delete', maxBadRecords: 1 });
    assert.equal(failed.currentStatus.status, 'Failed');
    assert.equal(
      failed.currentStatus.logData?.message,
      'The file has 2 defects in 2 of 4 records read, more bad records than maxBadRecords=1; nothing was deleted.',
    );
    assert.deepEqual(
      failed.currentStatus.errorData?.errors.map((e) => [e.line, e.property]),
      [
        [3, 'id'],
        [5, 'id'],
      ],
    );
    assert.deepEqual(await dataset(id), before);
    assert.equal((await allRecords(h, id)).length, 5);

    const tolerated = await completed(id, file, 'delete', { maxBadRecords: 2 });
    assert.deepEqual(tolerated.currentStatus.logData, {
      message:
        'Deleted 2 records; 0 keys matched no record; the dataset holds 3. 2 records with defects were left out (maxBadRecords=2).',
      rowsRead: 4,
      rowsLoaded: 3,
      duplicatesCollapsed: 0,
      rowsRejected: 2,
      recordsDeleted: 2,
      keysNotFound: 0,
    });
    assert.equal(tolerated.currentStatus.errorData?.errorCount, 2);
    assert.ok(tolerated.rejectedRowsUrl, 'a rejected-rows link');
    assert.deepEqual(await allRecords(h, id), [
      { id: 2, name: 'a' },
      { id: 4, name: 'a' },
      { id: 5, name: 'a' },
    ]);

    // Whole records sent with mode=delete by mistake delete nothing, whatever maxBadRecords says.
    const whole = await uploadAndWait(h, id, csv([[2, 'a']]), { mode: 'delete', maxBadRecords: 100 });
    assert.equal(whole.currentStatus.status, 'Failed');
    assert.deepEqual(whole.currentStatus.errorData?.errors, [
      {
        line: 1,
        property: 'name',
        message:
          'column "name" is not part of the primary key (id); a mode=delete file holds the key\'s values only',
      },
    ]);
    assert.equal((await dataset(id)).recordCount, 3);
  });

  void it('delete: by a composite key, from CSV (columns in any order) and NDJSON', async () => {
    const id = await h.defineDataset(
      [
        { name: 'region', type: 'string' },
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ],
      ['region', 'id'],
    );
    await completed(id, 'region,id,name\neu,1,a\nus,1,b\neu,2,c\nus,2,d\n', 'create');
    // (us, 3) is not held; (eu, 1) is, and so is (us, 1) but it is not listed.
    const csvJob = await completed(id, 'id,region\n1,eu\n3,us\n', 'delete');
    assert.equal(csvJob.currentStatus.logData?.recordsDeleted, 1);
    assert.equal(csvJob.currentStatus.logData?.keysNotFound, 1);
    const ndjson = await completed(id, '{"region":"us","id":2}\n{"id":1,"region":"us"}\n', 'delete', {
      contentType: 'json',
      mediaType: 'application/x-ndjson',
    });
    assert.equal(ndjson.currentStatus.logData?.recordsDeleted, 2);
    assert.deepEqual(await allRecords(h, id), [{ region: 'eu', id: 2, name: 'c' }]);
    assert.equal((await dataset(id)).recordCount, 1);
  });

  void it('delete: a retried request (Idempotency-Key) answers the same job, which deletes once', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 3, 'a')), 'create');
    const idempotencyKey = `delete-${process.pid}-${Date.now()}`;
    const first = await requestUpload(h, id, { mode: 'delete', idempotencyKey });
    const retry = await requestUpload(h, id, { mode: 'delete', idempotencyKey });
    assert.deepEqual(retry, first);
    assert.equal((await putFile(first.url, 'id\n2\n')).status, 200);
    const job = await h.waitForJob(first.jobId);
    assert.equal(job.currentStatus.logData?.recordsDeleted, 1);
    // A retry after the job ended still answers it: no second job, nothing deleted twice.
    const late = await requestUpload(h, id, { mode: 'delete', idempotencyKey });
    assert.equal(late.jobId, first.jobId);
    const jobs = await h.api<{ data: { mode: string }[] }>('GET', `/datasets/${id}/jobs`);
    assert.deepEqual(jobs.json.data.map((j) => j.mode).sort(), ['create', 'delete']);
    assert.deepEqual(await allRecords(h, id), [
      { id: 1, name: 'a' },
      { id: 3, name: 'a' },
    ]);
  });

  void it('upsert and delete: a dataset without a primary key refuses them at the request (409)', async () => {
    const id = await h.defineDataset(PROPS);
    const refusals = {
      upsert:
        'mode=upsert replaces records by their primary key, and this dataset has none; use mode=append or mode=replace.',
      delete:
        'mode=delete removes records by their primary key, and this dataset has none; use mode=replace with the records to keep.',
    };
    for (const [mode, detail] of Object.entries(refusals)) {
      for (const path of [
        `/datasets/${id}/uploadUrl?mode=${mode}`,
        `/datasets/${id}/records:load?mode=${mode}`,
      ]) {
        const res = await h.api<Json>(
          'POST',
          path,
          path.includes('uploadUrl') ? { contentType: 'csv' } : { url: `${filesUrl}/file.csv?body=x` },
        );
        assert.equal(res.status, 409, path);
        assert.equal(res.json.detail, detail);
        assert.equal(res.json.code, 'dataset_has_no_primary_key');
      }
    }
    const jobs = await h.api<{ data: unknown[] }>('GET', `/datasets/${id}/jobs`);
    assert.deepEqual(jobs.json.data, [], 'no job was made');
  });

  void it('append to a dataset without a primary key adds every row after the existing ones', async () => {
    const id = await h.defineDataset(PROPS);
    await completed(
      id,
      csv([
        [3, 'a'],
        [1, 'b'],
        [3, 'a'],
      ]),
      'create',
    );
    const job = await completed(
      id,
      csv([
        [1, 'b'],
        [0, 'c'],
      ]),
      'append',
    );
    assert.equal(job.currentStatus.logData?.rowsLoaded, 5);
    assert.equal(job.currentStatus.logData?.recordsAdded, 2);
    assert.deepEqual(await allRecords(h, id, 2), [
      { id: 3, name: 'a' },
      { id: 1, name: 'b' },
      { id: 3, name: 'a' },
      { id: 1, name: 'b' },
      { id: 0, name: 'c' },
    ]);
    assert.equal((await dataset(id)).recordCount, 5);
  });

  void it('upsert is one swap: a reader paging during it sees all old or all new records', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 3000, 'old')), 'create');
    // Every old key replaced, 1000 added.
    const upload = await requestUpload(h, id, { mode: 'upsert' });
    await putFile(upload.url, csv(range(1, 4000, 'new')));
    const seen = new Set<string>();
    for (let round = 0; round < 200 && !seen.has('new'); round++) {
      // One traversal, page after page; a token of a replaced generation is a 409 (start again).
      const names: string[] = [];
      let token: string | null = null;
      let restarted = false;
      do {
        const q: string = `pageSize=700${token !== null ? `&pageToken=${token}` : ''}`;
        const res = await h.api<{ metadata: { nextPageToken: string | null }; data: { name: string }[] }>(
          'GET',
          `/datasets/${id}/records?${q}`,
        );
        if (res.status === 409) {
          restarted = true;
          break;
        }
        assert.equal(res.status, 200, res.text);
        names.push(...res.json.data.map((r) => r.name));
        token = res.json.metadata.nextPageToken;
      } while (token !== null);
      if (restarted) continue;
      const kinds = new Set(names);
      assert.equal(kinds.size, 1, 'a traversal mixed old and new records');
      const [name = ''] = kinds;
      assert.equal(names.length, name === 'old' ? 3000 : 4000);
      seen.add(name);
    }
    assert.equal((await h.waitForJob(upload.jobId)).currentStatus.status, 'Completed');
    assert.ok(seen.has('new'));
    assert.equal((await dataset(id)).recordCount, 4000);
  });

  void it('runs queued loads of one dataset one at a time, in order: the second sees the first', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 2, 'base')), 'create');
    // A is big, B small: run side by side, B would end first and A's append would then meet B's key.
    const a = await requestUpload(h, id, { mode: 'append' });
    const b = await requestUpload(h, id, { mode: 'upsert' });
    assert.equal((await putFile(a.url, csv(range(3, 40_000, 'A')))).status, 200);
    assert.equal((await putFile(b.url, csv([[40_000, 'B']]))).status, 200);
    const jobA = await h.waitForJob(a.jobId, 120_000);
    const jobB = await h.waitForJob(b.jobId, 120_000);
    assert.equal(jobA.currentStatus.status, 'Completed', JSON.stringify(jobA.currentStatus));
    assert.equal(jobB.currentStatus.status, 'Completed', JSON.stringify(jobB.currentStatus));
    assert.equal(jobB.currentStatus.logData?.recordsReplaced, 1, 'B replaced the record A added');
    type Entries = { data: { status: string; dateCreated: string }[] };
    const logsA = await h.api<Entries>('GET', `/datasets/jobs/${a.jobId}/logs`);
    const logsB = await h.api<Entries>('GET', `/datasets/jobs/${b.jobId}/logs`);
    const aDone = logsA.json.data.find((e) => e.status === 'Completed')?.dateCreated ?? '';
    const bStarted = logsB.json.data.find((e) => e.status === 'Running')?.dateCreated ?? '';
    assert.ok(bStarted >= aDone, `B started (${bStarted}) before A completed (${aDone})`);
    const records = await allRecords(h, id, 10_000);
    assert.equal(records.length, 40_000);
    assert.deepEqual(records.at(-1), { id: 40_000, name: 'B' });
    assert.equal((await dataset(id)).recordCount, 40_000);
  });

  void it('a load that built on records another load replaced meanwhile runs again on the new ones', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    await completed(id, csv(range(1, 2, 'base')), 'create');
    const before = await h.services.records.listTables(id);
    gatedBody = csv([[10, 'A']]);
    gate = new Promise((resolve) => (openGate = resolve));
    const a = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load?mode=append`, {
      url: `${filesUrl}/gated.csv`,
    });
    assert.equal(a.status, 202, a.text);
    // A has read the dataset and made its table (a copy of generation 1), and waits for its file.
    for (let i = 0; (await h.services.records.listTables(id)).length === before.length; i++) {
      assert.ok(i < 400, 'job A made no table');
      await new Promise((r) => setTimeout(r, 25));
    }
    // B is claimed past the claim's order, as two racing PostgreSQL claimers could, and commits.
    const b = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load?mode=upsert`, {
      url: `${filesUrl}/file.csv?body=${encodeURIComponent(
        csv([
          [1, 'B'],
          [11, 'B'],
        ]),
      )}`,
    });
    const racer = { kind: 'claimer', owner: 'racing claimer', leaseMs: 60_000 } as const;
    const jobB = await transitionJob(
      h.database.db,
      { id: b.json.jobId },
      { move: 'claimed', by: racer, log: { message: 'Loading records.' } },
    );
    assert.ok(jobB !== undefined, 'B was claimed');
    const { objects, records, signingSecret } = h.services;
    const signal = new AbortController().signal;
    await loadJob(
      { config: h.config, db: h.database.db, objects, records, signingSecret },
      jobB,
      racer.owner,
      signal,
    );
    openGate();
    const jobA = await h.waitForJob(a.json.jobId);
    assert.equal(jobA.currentStatus.status, 'Completed', JSON.stringify(jobA.currentStatus));
    const logs = await h.api<{ data: { status: string; logData: { message: string } }[] }>(
      'GET',
      `/datasets/jobs/${a.json.jobId}/logs`,
    );
    assert.deepEqual(
      logs.json.data.map((e) => e.status),
      ['Queued', 'Running', 'Queued', 'Running', 'Completed'],
    );
    assert.equal(
      logs.json.data[2]?.logData.message,
      'Another load of the dataset committed while this job ran; it will run again from scratch on the new records.',
    );
    assert.deepEqual(await allRecords(h, id), [
      { id: 1, name: 'B' },
      { id: 2, name: 'base' },
      { id: 10, name: 'A' },
      { id: 11, name: 'B' },
    ]);
    assert.equal((await dataset(id)).recordCount, 4);
  });
});
