// Row errors, tolerated bad records and dry runs, through the HTTP interface: maxBadRecords leaves
// bad records out (or fails the job and changes nothing), every defect is stored and pages out in
// line order, the rejected-rows file holds each bad record's text, a dry run reports what a real
// load would and changes nothing, and the options are checked and kept on the job.
import { sealSourceUrl, sourceUrlKey } from '../../src/domain/jobs/source-url.js';
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Papa from 'papaparse';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type JobBody } from '../support/fixture.js';
import { allRecords, putFile } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string', required: true },
  { name: 'ok', type: 'boolean' },
];

// Three bad records (four defects: line 3 has two), one of them spanning two lines.
const THREE_BAD = [
  'id,name,ok',
  '1,a,true',
  'x,,true',
  '3,c,true',
  '4,"multi',
  'line",maybe',
  '5,e,true',
  '6,f,false,extra',
  '7,g,true',
  '',
].join('\n');

interface JobView extends JobBody {
  dryRun: boolean;
  maxBadRecords: number;
  rejectedRowsUrl: string | null;
  currentStatus: JobBody['currentStatus'] & {
    datasetJobLogId: number;
    logData: (NonNullable<JobBody['currentStatus']['logData']> & { rowsRejected?: number }) | null;
  };
}

interface RowError {
  line: number;
  property?: string;
  message: string;
}

interface ErrorsPage {
  metadata: { count: number; nextPageToken: string | null };
  data: RowError[];
}

await forEachDatabase('row errors', (target) => {
  let h: Fixture;
  let files: Server;
  let filesUrl = '';
  const served = new Map<string, string[]>(); // path → bodies to serve, one per request (the last repeats)
  before(async () => {
    h = await startFixture(target, { LOAD_URL_ALLOWLIST: '127.0.0.1/32' });
    files = createServer((req, res) => {
      const bodies = served.get(req.url ?? '');
      if (bodies === undefined) {
        res.writeHead(404);
        res.end();
        return;
      }
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.end(bodies.length > 1 ? bodies.shift() : bodies[0]);
    });
    await new Promise<void>((resolve) => files.listen(0, '127.0.0.1', resolve));
    filesUrl = `http://127.0.0.1:${(files.address() as AddressInfo).port}`;
  });
  after(async () => {
    await new Promise((resolve) => files.close(resolve));
    await h.close();
  });

  const query = (options: Record<string, string | number | boolean>) =>
    new URLSearchParams(Object.entries(options).map(([k, v]): [string, string] => [k, String(v)])).toString();

  /** Uploads `body` through an upload URL with the given query options; waits for the job's end. */
  const upload = async (
    id: string,
    body: string,
    options: Record<string, string | number | boolean> = {},
  ) => {
    const res = await h.api<{ url: string; jobId: string }>(
      'POST',
      `/datasets/${id}/uploadUrl?${query(options)}`,
      { contentType: 'csv' },
    );
    assert.equal(res.status, 202, res.text);
    const put = await putFile(res.json.url, body);
    assert.equal(put.status, 200, await put.text());
    await h.waitForJob(res.json.jobId);
    return job(res.json.jobId);
  };

  /** Loads `body` through records:load (served by the test's file server) with the options. */
  const load = async (
    id: string,
    body: string | string[],
    options: Record<string, string | number | boolean> = {},
  ) => {
    const path = `/${id}-${served.size}.csv`;
    served.set(path, Array.isArray(body) ? [...body] : [body]);
    const res = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load?${query(options)}`, {
      url: `${filesUrl}${path}`,
    });
    assert.equal(res.status, 202, res.text);
    await h.waitForJob(res.json.jobId);
    return job(res.json.jobId);
  };

  const job = async (jobId: string): Promise<JobView> => {
    const res = await h.api<JobView>('GET', `/datasets/jobs/${jobId}`);
    assert.equal(res.status, 200, res.text);
    return res.json;
  };

  /** Every error of a job through the paging API, checking each page's envelope. */
  const allErrors = async (jobId: string, pageSize?: number): Promise<RowError[]> => {
    const out: RowError[] = [];
    let token: string | null = null;
    do {
      const params = new URLSearchParams();
      if (pageSize !== undefined) params.set('pageSize', String(pageSize));
      if (token !== null) params.set('pageToken', token);
      const res = await h.api<ErrorsPage>('GET', `/datasets/jobs/${jobId}/errors?${params.toString()}`);
      assert.equal(res.status, 200, res.text);
      assert.equal(res.json.metadata.count, res.json.data.length);
      out.push(...res.json.data);
      token = res.json.metadata.nextPageToken;
    } while (token !== null);
    return out;
  };

  /** The rejected-rows file of a job, parsed. */
  const rejectedRows = async (view: JobView): Promise<string[][]> => {
    assert.ok(view.rejectedRowsUrl !== null, 'the job offers a rejected-rows link');
    const res = await fetch(view.rejectedRowsUrl);
    assert.equal(res.status, 200, await res.clone().text());
    assert.match(res.headers.get('content-type') ?? '', /^text\/csv/);
    const parsed = Papa.parse<string[]>((await res.text()).replace(/\r\n$/, ''), { newline: '\r\n' });
    assert.deepEqual(parsed.errors, []);
    return parsed.data;
  };

  /** What a dataset looks like from outside and underneath: unchanged by a failed or dry load. */
  const datasetState = async (id: string) => {
    const ds = await h.api<{ recordCount: number; dateLastRecordUpdated: string | null }>(
      'GET',
      `/datasets/${id}`,
    );
    const row = await h.database.db
      .selectFrom('datasets')
      .select(['generation', 'records_table'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    return {
      recordCount: ds.json.recordCount,
      dateLastRecordUpdated: ds.json.dateLastRecordUpdated,
      generation: row.generation,
      recordsTable: row.records_table,
      records: await allRecords(h, id),
    };
  };

  void it('maxBadRecords=5 with 3 bad records: the rest loads, the rejected rows hold exactly those 3', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const view = await upload(id, THREE_BAD, { maxBadRecords: 5 });
    const status = view.currentStatus;
    assert.equal(status.status, 'Completed', JSON.stringify(status));
    assert.equal(view.maxBadRecords, 5);
    assert.equal(view.dryRun, false);
    assert.equal(status.logData?.rowsRead, 7);
    assert.equal(status.logData?.rowsLoaded, 4);
    assert.equal(status.logData?.rowsRejected, 3);
    assert.match(status.logData?.message ?? '', /Loaded 4 records\. 3 records with defects were left out/);
    assert.equal(status.errorData?.errorCount, 4);
    assert.deepEqual(
      status.errorData?.errors.map((e) => [e.line, e.property]),
      [
        [3, 'id'],
        [3, 'name'],
        [5, 'ok'],
        [8, undefined],
      ],
    );
    assert.deepEqual(
      ((await allRecords(h, id)) as { id: number }[]).map((r) => r.id),
      [1, 3, 5, 7],
    );
    assert.equal((await datasetState(id)).recordCount, 4);

    const rows = await rejectedRows(view);
    assert.deepEqual(rows[0], ['line', 'property', 'message', 'originalText']);
    assert.deepEqual(
      rows.slice(1).map(([line, property, , text]) => [line, property, text]),
      [
        ['3', 'id', 'x,,true'],
        ['3', 'name', 'x,,true'],
        ['5', 'ok', '4,"multi\nline",maybe'],
        ['8', '', '6,f,false,extra'],
      ],
    );
    for (const row of rows.slice(1)) assert.ok((row[2] ?? '').length > 0, 'every defect has its message');
    assert.deepEqual(
      rows.slice(1).map((r) => r[2]),
      status.errorData?.errors.map((e) => e.message),
    );
  });

  void it('maxBadRecords=2 with 3 bad records: the job fails and nothing changes', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    assert.equal((await upload(id, 'id,name,ok\n10,old,true\n')).currentStatus.status, 'Completed');
    const before = await datasetState(id);
    const view = await upload(id, THREE_BAD, { mode: 'replace', maxBadRecords: 2 });
    const status = view.currentStatus;
    assert.equal(status.status, 'Failed', JSON.stringify(status));
    assert.match(
      status.logData?.message ?? '',
      /in 3 of 7 records read, more bad records than maxBadRecords=2/,
    );
    assert.equal(status.logData?.rowsRejected, 3);
    assert.equal(status.errorData?.errorCount, 4);
    assert.deepEqual(await datasetState(id), before);
    // Every job with defects offers its rejected rows, a failed one too.
    assert.equal((await rejectedRows(view)).length, 5);
    // A defect of the file itself is never tolerated.
    const header = await upload(id, 'id,name,ok,extra\n1,a,true,z\n', {
      mode: 'replace',
      maxBadRecords: 100,
    });
    assert.equal(header.currentStatus.status, 'Failed');
    assert.deepEqual(await datasetState(id), before);
  });

  void it('5,000 bad records page out completely, in line order', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const lines = ['id,name,ok'];
    const expected: number[] = [];
    for (let i = 0; i < 6000; i++) {
      // Every sixth record is good; the others have a bad boolean.
      if (i % 6 === 5) lines.push(`${i},n${i},true`);
      else {
        lines.push(`${i},n${i},nope${i}`);
        expected.push(i + 2);
      }
    }
    assert.equal(expected.length, 5000);
    const view = await upload(id, `${lines.join('\n')}\n`);
    const status = view.currentStatus;
    assert.equal(status.status, 'Failed');
    assert.equal(status.errorData?.errorCount, 5000);
    assert.equal(status.logData?.rowsRejected, 5000);
    assert.deepEqual(
      status.errorData?.errors.map((e) => e.line),
      expected.slice(0, 100),
    );
    const all = await allErrors(view.datasetJobId, 700);
    assert.deepEqual(
      all.map((e) => e.line),
      expected,
    );
    assert.ok(all.every((e) => e.property === 'ok' && /nope/.test(e.message)));
    // The default page size is 100.
    const first = await h.api<ErrorsPage>('GET', `/datasets/jobs/${view.datasetJobId}/errors`);
    assert.equal(first.json.metadata.count, 100);
    const csv = await rejectedRows(view);
    assert.equal(csv.length, 5001);
    assert.deepEqual(csv[5000], ['6000', 'ok', all[4999]?.message, '5998,n5998,nope5998']);
  });

  void it('a dry run reports what the real load does and leaves the dataset untouched', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    assert.equal((await upload(id, 'id,name,ok\n10,old,true\n')).currentStatus.status, 'Completed');
    const before = await datasetState(id);

    const dry = await upload(id, THREE_BAD, { mode: 'replace', maxBadRecords: 5, dryRun: true });
    assert.equal(dry.dryRun, true);
    assert.equal(dry.currentStatus.status, 'Completed', JSON.stringify(dry.currentStatus));
    assert.match(dry.currentStatus.logData?.message ?? '', /^Dry run: 4 records would have been loaded\./);
    assert.match(dry.currentStatus.logData?.message ?? '', /Nothing was changed\./);
    assert.deepEqual(await datasetState(id), before);
    assert.deepEqual(await h.services.records.listTables(id), [before.recordsTable]);

    const dryFailing = await load(id, THREE_BAD, { mode: 'replace', dryRun: 'true' });
    assert.equal(dryFailing.dryRun, true);
    assert.equal(dryFailing.currentStatus.status, 'Failed');
    assert.match(dryFailing.currentStatus.logData?.message ?? '', /^Dry run: /);
    assert.deepEqual(await datasetState(id), before);

    const real = await upload(id, THREE_BAD, { mode: 'replace', maxBadRecords: 5 });
    assert.equal(real.currentStatus.status, 'Completed');
    const { message: dryMessage, ...dryCounts } = dry.currentStatus.logData ?? { message: '' };
    const { message: realMessage, ...realCounts } = real.currentStatus.logData ?? { message: '' };
    assert.notEqual(dryMessage, realMessage);
    assert.deepEqual(dryCounts, realCounts);
    assert.deepEqual(dry.currentStatus.errorData, real.currentStatus.errorData);
    assert.deepEqual(await allErrors(dry.datasetJobId), await allErrors(real.datasetJobId));
    assert.deepEqual(await allErrors(dryFailing.datasetJobId), await allErrors(real.datasetJobId));
    assert.deepEqual(await rejectedRows(dry), await rejectedRows(real));
    assert.equal((await datasetState(id)).generation, before.generation + 1);

    // A dry run's request is checked as a real load's: mode=create on a dataset with records is 409.
    const create = await h.api('POST', `/datasets/${id}/uploadUrl?dryRun=true`, { contentType: 'csv' });
    assert.equal(create.status, 409);
  });

  void it('keeps the options on the job, from both requests, and refuses bad values with 400', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const plain = await load(id, 'id,name,ok\n1,a,true\n');
    assert.equal(plain.dryRun, false);
    assert.equal(plain.maxBadRecords, 0);
    assert.equal(plain.rejectedRowsUrl, null);
    assert.equal(plain.currentStatus.logData?.rowsRejected, 0);
    const tolerant = await load(id, THREE_BAD, { mode: 'replace', maxBadRecords: 1_000_000_000 });
    assert.equal(tolerant.maxBadRecords, 1_000_000_000);
    assert.equal(tolerant.currentStatus.status, 'Completed');
    const listed = await h.api<{ data: JobView[] }>('GET', `/datasets/${id}/jobs`);
    assert.deepEqual(
      listed.json.data.map((j) => [j.maxBadRecords, j.rejectedRowsUrl !== null]),
      [
        [1_000_000_000, true],
        [0, false],
      ],
    );

    const bad: [string, string][] = [
      ['dryRun=yes', 'dryRun'],
      ['dryRun=', 'dryRun'],
      ['dryRun=true&dryRun=false', 'dryRun'],
      ['maxBadRecords=-1', 'maxBadRecords'],
      ['maxBadRecords=abc', 'maxBadRecords'],
      ['maxBadRecords=1.5', 'maxBadRecords'],
      ['maxBadRecords=1000000001', 'maxBadRecords'],
      ['maxBadRecords=99999999999', 'maxBadRecords'],
    ];
    const jobsBefore = (await h.api<{ data: unknown[] }>('GET', `/datasets/${id}/jobs`)).json.data.length;
    for (const [q, field] of bad) {
      for (const [path, body] of [
        [`uploadUrl?mode=replace&${q}`, { contentType: 'csv' }],
        [`records:load?mode=replace&${q}`, { url: `${filesUrl}/x.csv` }],
      ] as const) {
        const res = await h.api<{ status: number; errors: Record<string, string[]> }>(
          'POST',
          `/datasets/${id}/${path}`,
          body,
        );
        assert.equal(res.status, 400, `${path}: ${res.text}`);
        assert.ok(Object.keys(res.json.errors).includes(field), `${path}: ${res.text}`);
      }
    }
    assert.equal(
      (await h.api<{ data: unknown[] }>('GET', `/datasets/${id}/jobs`)).json.data.length,
      jobsBefore,
    );
  });

  void it('shows errors only to those who see the job; the link is the only key to its file', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const view = await upload(id, THREE_BAD);
    assert.equal(view.currentStatus.status, 'Failed');
    const url = view.rejectedRowsUrl ?? '';
    const mine = h.token;
    h.token = await h.otherToken();
    try {
      assert.equal((await h.api('GET', `/datasets/jobs/${view.datasetJobId}/errors`)).status, 404);
      assert.equal((await h.api('GET', `/datasets/jobs/${view.datasetJobId}`)).status, 404);
      assert.equal((await h.api('GET', `/datasets/jobs/no-such-job/errors`)).status, 404);
    } finally {
      h.token = mine;
    }
    const tampered = new URL(url);
    tampered.searchParams.set('signature', '0'.repeat(64));
    assert.equal((await fetch(tampered)).status, 403);
    const otherJob = new URL(url);
    otherJob.pathname = otherJob.pathname.replace(view.datasetJobId, 'another-job');
    assert.equal((await fetch(otherJob)).status, 403);
    const expired = new URL(url);
    expired.searchParams.set('expires', '1');
    assert.equal((await fetch(expired)).status, 403);
    assert.equal((await fetch(url)).status, 200);
    // Page tokens that are not ours, and page sizes out of range, are 400.
    for (const q of ['pageToken=garbage', 'pageToken=WzEsMl0', 'pageSize=0', 'pageSize=10001']) {
      const res = await h.api('GET', `/datasets/jobs/${view.datasetJobId}/errors?${q}`);
      assert.equal(res.status, 400, `${q}: ${res.text}`);
    }
    // Deleting the dataset takes the errors with it; an old link then finds nothing.
    assert.equal((await h.api('DELETE', `/datasets/${id}`)).status, 204);
    assert.equal((await fetch(url)).status, 404);
    const left = await h.database.db
      .selectFrom('dataset_job_errors')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('job_id', '=', view.datasetJobId)
      .executeTakeFirstOrThrow();
    assert.equal(Number(left.n), 0);
  });

  void it('a re-run attempt replaces the errors of the earlier one', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const first = await load(id, [THREE_BAD, 'id,name,ok\n1,a,true\n2,b,nope\n']);
    assert.equal(first.currentStatus.errorData?.errorCount, 4);
    // As if the attempt had died before its end: the job is Running under a lapsed lease, with the
    // URL it would still hold then (an ended job's is cleared; this one's has no query to hide).
    const { source_shown: url } = await h.database.db
      .selectFrom('dataset_jobs')
      .select('source_shown')
      .where('id', '=', first.datasetJobId)
      .executeTakeFirstOrThrow();
    await h.database.db
      .updateTable('dataset_jobs')
      .set({
        status: 'Running',
        lease_owner: 'dead-worker',
        lease_expires_at: Date.now() - 1000,
        source_url: sealSourceUrl(sourceUrlKey(h.services.signingSecret), first.datasetJobId, url ?? ''),
      })
      .where('id', '=', first.datasetJobId)
      .execute();
    h.services.notifier.notify();
    // The re-run writes new status entries (Running, then its end); wait for its end.
    const firstEntry = first.currentStatus.datasetJobLogId;
    let again = await job(first.datasetJobId);
    for (let i = 0; i < 400; i++) {
      const { datasetJobLogId, status } = again.currentStatus;
      if (datasetJobLogId > firstEntry && status !== 'Running') break;
      await new Promise((r) => setTimeout(r, 25));
      again = await job(first.datasetJobId);
    }
    assert.equal(again.currentStatus.status, 'Failed', JSON.stringify(again.currentStatus));
    assert.equal(again.currentStatus.errorData?.errorCount, 1);
    assert.deepEqual(await allErrors(first.datasetJobId), [
      { line: 3, property: 'ok', message: again.currentStatus.errorData?.errors[0]?.message },
    ]);
    const stored = await h.database.db
      .selectFrom('dataset_job_errors')
      .select(['attempt'])
      .where('job_id', '=', first.datasetJobId)
      .execute();
    assert.deepEqual(
      stored.map((r) => r.attempt),
      [2],
    );
  });
});
