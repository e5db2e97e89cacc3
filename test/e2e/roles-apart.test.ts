// The roles apart, end to end: one `dx serve --role api`, two `--role worker` and one `--role
// proxy` process on a fresh PostgreSQL database with STORAGE=s3 on the test store (CI: Ceph's
// RADOS Gateway), once per S3_TRANSFERS mode, then again through PgBouncer in transaction mode.
// Through HTTP and the CLI only: a single upload, a resumable one, a load from a URL, a worker
// killed with SIGKILL mid-job (the other finishes the job, once), the export of its records to
// the last byte, and a proxied call.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { databaseTargets } from '../support/databases.js';
import type { JobBody } from '../support/fixture.js';
import type { Served } from '../support/served.js';
import { S3_TEST_CREDENTIALS } from '../support/s3-server.js';
import { startSlowCsvServer, type SlowCsvServer } from '../support/workers.js';
import {
  pgbouncerProblem,
  startRolesApart,
  type DatabaseRoute,
  type RolesApart,
} from './support/roles-apart.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
const FINAL = ['Completed', 'Failed', 'Expired'];

/** A CSV of ids `0 … n-1` named `name-<id>`, with the line ends given. */
function csv(n: number, name: string, eol = '\n'): string {
  let text = `id,name${eol}`;
  for (let i = 0; i < n; i++) text += `${i},${name}-${i}${eol}`;
  return text;
}

/** Whether `s` logged the line `msg` about job `jobId` (its stdout is JSON lines). */
function logged(s: Served, msg: string, jobId: string): boolean {
  return s
    .stdout()
    .split('\n')
    .some((line) => line.includes(`"msg":"${msg}"`) && line.includes(`"jobId":"${jobId}"`));
}

function scenario(route: DatabaseRoute, transfers: 'service' | 'direct') {
  let d: RolesApart;
  let fast: SlowCsvServer;
  let slow: SlowCsvServer;
  before(async () => {
    d = await startRolesApart(route, transfers);
    fast = await startSlowCsvServer(300, 40);
    // 3000 rows over 3 s: long enough to kill the worker in the middle.
    slow = await startSlowCsvServer(3000, 3000);
  });
  after(async () => {
    await fast?.close();
    await slow?.close();
    await d?.close();
  });

  const dataset = async () => {
    const res = await d.call<{ datasetId: string }>('POST', '/datasets', {
      name: `roles apart ${Math.random()}`,
      schema: { properties: PROPS, primaryKey: ['id'] },
    });
    assert.equal(res.status, 201, res.text);
    return res.json.datasetId;
  };
  const finished = async (jobId: string, timeoutMs = 30_000): Promise<JobBody> => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await d.call<JobBody>('GET', `/datasets/jobs/${jobId}`);
      assert.equal(res.status, 200, res.text);
      if (FINAL.includes(res.json.currentStatus.status)) return res.json;
      assert.ok(Date.now() < until, `job ${jobId} still ${res.json.currentStatus.status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  const recordCount = async (datasetId: string) =>
    (await d.call<{ recordCount: number }>('GET', `/datasets/${datasetId}`)).json.recordCount;

  it('every process opened its pool as DATABASE_POOL_SIZE says', () => {
    const pool = (s: Served) => {
      const line = s
        .stdout()
        .split('\n')
        .find((l) => l.includes('"msg":"PostgreSQL pool opened"'));
      const { poolSize, connectionsAtMost } = JSON.parse(line ?? '{}') as Record<string, unknown>;
      return { poolSize, connectionsAtMost };
    };
    for (const s of [d.api, ...d.workers, d.proxy])
      assert.deepEqual(pool(s), { poolSize: 4, connectionsAtMost: 4 });
  });

  it('loads a file uploaded with dx upload', { timeout: 60_000 }, async () => {
    const id = await dataset();
    const file = join(d.dir, 'single.csv');
    writeFileSync(file, csv(500, 'single'));
    const res = await d.dx('upload', id, file, '--json', '--timeout', '60');
    assert.equal(res.code, 0, res.stderr);
    const job = JSON.parse(res.stdout) as JobBody;
    assert.equal(job.currentStatus.status, 'Completed', res.stdout);
    assert.equal(job.currentStatus.logData?.rowsLoaded, 500);
    assert.equal(await recordCount(id), 500);
  });

  it(
    `hands out upload URLs of the ${transfers === 'direct' ? 'store' : 'service'}`,
    { timeout: 60_000 },
    async () => {
      const id = await dataset();
      const up = await d.call<{ url: string; jobId: string }>('POST', `/datasets/${id}/uploadUrl`, {
        contentType: 'csv',
      });
      assert.equal(up.status, 202, up.text);
      const expected = transfers === 'direct' ? new URL(d.env.S3_ENDPOINT ?? '').origin : d.apiUrl;
      assert.equal(new URL(up.json.url).origin, expected);
      const put = await fetch(up.json.url, {
        method: 'PUT',
        headers: { 'content-type': 'text/csv' },
        body: csv(40, 'put'),
      });
      assert.equal(put.status, 200, await put.text());
      const job = await finished(up.json.jobId);
      assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
      assert.equal(await recordCount(id), 40);
    },
  );

  it('takes a resumable upload in slices', { timeout: 60_000 }, async () => {
    const id = await dataset();
    const up = await d.call<{ url: string; jobId: string }>(
      'POST',
      `/datasets/${id}/uploadUrl?type=resumable`,
      {
        contentType: 'csv',
      },
    );
    assert.equal(up.status, 202, up.text);
    // Whatever S3_TRANSFERS says, a resumable session is the service's own URL.
    assert.equal(new URL(up.json.url).origin, d.apiUrl);
    const file = Buffer.from(csv(2000, 'sliced'));
    const size = 8 * 1024;
    const put = (start: number, end: number) =>
      fetch(up.json.url, {
        method: 'PUT',
        redirect: 'manual',
        // As partners' scripts send slices: their bearer token still attached.
        headers: {
          authorization: `Bearer ${d.token}`,
          'content-type': 'text/csv',
          'content-range': `bytes ${start}-${end}/${file.length}`,
        },
        body: file.subarray(start, end + 1),
      });
    let start = 0;
    for (; start + size < file.length; start += size) {
      const res = await put(start, start + size - 1);
      assert.equal(res.status, 308, await res.text());
      assert.equal(res.headers.get('range'), `bytes=0-${start + size - 1}`);
    }
    assert.ok(start >= 2 * size, 'three slices at least');
    const last = await put(start, file.length - 1);
    assert.equal(last.status, 200, await last.text());
    const job = await finished(up.json.jobId);
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    assert.equal(job.currentStatus.logData?.rowsLoaded, 2000);
    const page = await d.call<{ data: unknown[] }>('GET', `/datasets/${id}/records?pageSize=2`);
    assert.deepEqual(page.json.data, [
      { id: 0, name: 'sliced-0' },
      { id: 1, name: 'sliced-1' },
    ]);
  });

  it('loads from a URL', { timeout: 60_000 }, async () => {
    const id = await dataset();
    const res = await d.call<{ jobId: string }>('POST', `/datasets/${id}/records:load`, {
      url: `${fast.url}/quick.csv`,
    });
    assert.equal(res.status, 202, res.text);
    const job = await finished(res.json.jobId);
    assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    assert.equal(job.currentStatus.logData?.rowsLoaded, 300);
  });

  it(
    'finishes, once, the job of a worker killed with SIGKILL mid-load; its records export to the last byte',
    { timeout: 120_000 },
    async () => {
      const id = await dataset();
      const res = await d.call<{ jobId: string }>('POST', `/datasets/${id}/records:load`, {
        url: `${slow.url}/killed.csv`,
      });
      assert.equal(res.status, 202, res.text);
      const jobId = res.json.jobId;
      // Whichever worker claimed it is the victim.
      let victim: Served | undefined;
      for (const until = Date.now() + 30_000; victim === undefined;) {
        victim = d.workers.find((w) => logged(w, 'job started', jobId));
        assert.ok(Date.now() < until, 'no worker started the job');
        if (victim === undefined) await new Promise((r) => setTimeout(r, 20));
      }
      const survivor = d.workers.find((w) => w !== victim) as Served;
      // 0.8 s into a 3-second file: running, part of it in the staging table.
      await new Promise((r) => setTimeout(r, 800));
      const running = await d.call<JobBody>('GET', `/datasets/jobs/${jobId}`);
      assert.equal(running.json.currentStatus.status, 'Running');
      victim.child.kill('SIGKILL');
      await new Promise((resolve) => victim.child.once('exit', resolve));
      assert.equal(victim.child.signalCode, 'SIGKILL');

      const job = await finished(jobId, 60_000);
      assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
      assert.equal(job.currentStatus.logData?.rowsLoaded, 3000);
      // The job's history: queued once, run twice (the second from scratch), ended once.
      const logs = await d.call<{
        data: { status: string; logData: { message: string } | null }[];
      }>('GET', `/datasets/jobs/${jobId}/logs`);
      const names = logs.json.data.map((l) => l.status);
      assert.equal(names.filter((n) => n === 'Queued').length, 1, names.join(','));
      assert.equal(names.filter((n) => n === 'Running').length, 2, names.join(','));
      assert.equal(names.filter((n) => FINAL.includes(n)).length, 1, names.join(','));
      assert.ok(
        logs.json.data.some((l) => /Running again from scratch \(attempt 2\)/.test(l.logData?.message ?? '')),
        JSON.stringify(logs.json.data),
      );
      // The other worker took it over and completed it; the killed one never did.
      assert.ok(logged(survivor, 'job started', jobId));
      assert.ok(logged(survivor, 'job completed', jobId));
      assert.ok(!logged(victim, 'job completed', jobId));

      // Every record once, nothing else: the export equals the file, byte for byte (CRLF lines).
      const link = await d.call<{ url: string }>('POST', `/datasets/${id}/records:retrieve`, {
        contentType: 'csv',
      });
      assert.equal(link.status, 200, link.text);
      const download = await fetch(link.json.url);
      assert.equal(download.status, 200);
      const body = Buffer.from(await download.arrayBuffer());
      const expected = Buffer.from(csv(3000, 'killedcsv', '\r\n'));
      assert.equal(body.length, expected.length);
      assert.ok(body.equals(expected), 'the export differs from the loaded file');
    },
  );

  it(
    'forwards a call with a proxy ID to the upstream, and refuses one without',
    { timeout: 30_000 },
    async () => {
      const authorization = `Basic ${Buffer.from('roles-apart:apikey|0').toString('base64')}`;
      const res = await fetch(`${d.proxyUrl}/v4/people/1001`, {
        headers: { authorization, 'x-proxyvid': d.proxyId },
      });
      assert.equal(res.status, 200);
      assert.deepEqual(await res.json(), { vanId: 1001, firstName: 'Ada', lastName: 'Lovelace' });
      const seen = d.upstream.requestsSeen;
      const refused = await fetch(`${d.proxyUrl}/v4/people/1001`, { headers: { authorization } });
      await refused.arrayBuffer();
      assert.ok(refused.status >= 400 && refused.status < 500, String(refused.status));
      assert.equal(d.upstream.requestsSeen, seen, 'a call without a proxy ID never reaches the upstream');
    },
  );

  it('no process logged the store secret or a presigned signature', () => {
    for (const s of [d.api, ...d.workers, d.proxy]) {
      const out = s.stdout() + s.stderr();
      assert.ok(!out.includes(S3_TEST_CREDENTIALS.AWS_SECRET_ACCESS_KEY));
      assert.ok(!out.includes('X-Amz-Signature'));
    }
  });
}

const postgres = (await databaseTargets()).find((t) => t.name === 'postgres');
const bouncer = pgbouncerProblem();
for (const route of ['postgres', 'pgbouncer'] as const) {
  const skip = postgres?.skip ?? (route === 'pgbouncer' ? bouncer : null);
  const where = route === 'pgbouncer' ? 'PostgreSQL through PgBouncer' : 'PostgreSQL';
  for (const transfers of ['service', 'direct'] as const) {
    void describe(`roles apart on ${where}, S3_TRANSFERS=${transfers}`, { skip: skip ?? false }, () =>
      scenario(route, transfers),
    );
  }
}
