// Roles apart, as an operator runs them at scale: the API in one process, two `dx serve --role
// worker` processes sharing the jobs through one PostgreSQL schema, files in an S3-compatible
// store. Many jobs load concurrently; one worker is SIGKILLed mid-job. Every job must end
// Completed exactly once, with all its records and nothing else, and the kill must be recovered.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { S3_TEST_CREDENTIALS } from '../support/s3-server.js';
import { onDatabase } from '../support/databases.js';
import type { JobBody } from '../support/fixture.js';
import { eventually } from '../support/poll.js';
import { BIN, startScaleOutStack, type ScaleOutStack } from '../support/scale-out.js';
import { stagingTableName } from '../../src/storage/records/index.js';
import { startSlowCsvServer, type SlowCsvServer, type WorkerProcess } from '../support/workers.js';

const run = promisify(execFile);
const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
const ROWS = 3000;

await onDatabase('postgres', 'two worker processes with S3 storage', (target) => {
  let stack: ScaleOutStack;
  let slow: SlowCsvServer;
  const workers: WorkerProcess[] = [];
  before(async () => {
    stack = await startScaleOutStack(target);
    slow = await startSlowCsvServer(ROWS, 2500);
  });
  after(async () => {
    await stack.close();
    await slow.close();
  });

  it('loads every job exactly once although a worker is killed mid-job', { timeout: 240_000 }, async () => {
    const h = stack.h;
    // Eight slow URL loads (2.5 s each) and six uploads through presigned URLs with `dx upload`.
    const loads: { datasetId: string; jobId: string; rows: number }[] = [];
    for (let i = 0; i < 8; i++) {
      const datasetId = await h.defineDataset(PROPS, ['id']);
      const res = await h.api<{ jobId: string }>('POST', `/datasets/${datasetId}/records:load`, {
        url: `${slow.url}/file-${i}.csv`,
      });
      assert.equal(res.status, 202, res.text);
      loads.push({ datasetId, jobId: res.json.jobId, rows: ROWS });
    }
    workers.push(stack.worker(), stack.worker());
    const [victim, survivor] = workers as [WorkerProcess, WorkerProcess];
    // Startup takes seconds on a busy machine: time the kill from when both are running.
    await Promise.all([victim.ready(), survivor.ready()]);

    const uploads = Array.from({ length: 6 }, async (_, i) => {
      const datasetId = await h.defineDataset(PROPS, ['id']);
      const file = join(h.config.dataDir, `upload-${i}.csv`);
      const n = 500 + i;
      writeFileSync(file, `id,name\n${Array.from({ length: n }, (_, r) => `${r},u${i}-${r}`).join('\n')}\n`);
      const { stdout } = await run(
        process.execPath,
        [BIN, 'upload', datasetId, file, '--json', '--timeout', '90'],
        {
          env: { ...process.env, DX_API_URL: h.baseUrl, DX_ACCESS_TOKEN: h.token },
        },
      );
      const job = JSON.parse(stdout) as JobBody;
      return { datasetId, jobId: job.datasetJobId, rows: n };
    });

    // Kill the victim while it holds a running job (the lease names its process id).
    const db = h.database.db;
    let victimJob: string | undefined;
    for (let i = 0; i < 2400 && victimJob === undefined; i++) {
      const row = await db
        .selectFrom('dataset_jobs')
        .select('id')
        .where('status', '=', 'Running')
        .where(
          'id',
          'in',
          loads.map((l) => l.jobId),
        )
        .where('lease_owner', 'like', `%:${victim.pid}:%`)
        .executeTakeFirst();
      victimJob = row?.id;
      if (victimJob === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    assert.ok(
      victimJob,
      `the victim never ran a job: ${victim.output()} ${JSON.stringify(await db.selectFrom('dataset_jobs').select(['id', 'status', 'lease_owner', 'attempts']).execute())}`,
    );
    // A slow load takes 2.5 s: killed once its staging table exists, it dies mid-file (a fixed
    // wait came too early on a loaded machine, before the worker had made the table).
    const victimDataset = loads.find((l) => l.jobId === victimJob)?.datasetId ?? '';
    const victimTable = stagingTableName(victimDataset, victimJob, 1);
    assert.ok(
      await eventually(
        async () => (await h.services.records.listTables(victimDataset)).includes(victimTable),
        10_000,
      ),
      `the victim never made its staging table: ${victim.output()}`,
    );
    victim.kill('SIGKILL');
    assert.equal((await victim.exited).signal, 'SIGKILL');

    const all = [...loads, ...(await Promise.all(uploads))];
    for (const { datasetId, jobId, rows } of all) {
      const job = await h.waitForJob(jobId, 60_000);
      assert.equal(
        job.currentStatus.datasetJobStatusName,
        'Completed',
        `${jobId}: ${JSON.stringify(job.currentStatus)}`,
      );
      assert.equal(job.currentStatus.logData?.rowsLoaded, rows);
      const logs = await h.api<{ data: { datasetJobStatusName: string; logData: { message: string } }[] }>(
        'GET',
        `/datasets/jobs/${jobId}/logs`,
      );
      const names = logs.json.data.map((l) => l.datasetJobStatusName);
      // Ended once, queued once: no second completion, no second arrival.
      assert.equal(names.filter((n) => n === 'Completed' || n === 'Failed').length, 1, names.join(','));
      assert.equal(names.filter((n) => n === 'Queued').length, 1, names.join(','));
      const ds = await h.api<{ recordCount: number }>('GET', `/datasets/${datasetId}`);
      assert.equal(ds.json.recordCount, rows);
      const row = await db
        .selectFrom('datasets')
        .select(['generation', 'records_table'])
        .where('id', '=', datasetId)
        .executeTakeFirstOrThrow();
      assert.equal(row.generation, 1, `dataset ${datasetId} was committed more than once`);
      // Besides the committed table, only tables awaiting their drop in the retirement ledger.
      const retired = (
        await db
          .selectFrom('dataset_retired_tables')
          .select('table_name')
          .where('dataset_id', '=', datasetId)
          .execute()
      ).map((r) => r.table_name);
      const tables = await h.services.records.listTables(datasetId);
      assert.deepEqual(
        tables.filter((t) => t !== row.records_table && !retired.includes(t)),
        [],
      );
      const count = await sql<{
        n: number;
      }>`select count(*)::int as n from ${sql.table(row.records_table ?? '')}`.execute(db);
      assert.equal(count.rows[0]?.n, rows);
    }
    // The killed attempt's table (with its partial rows) is retired, for the sweep to drop.
    const killed = await db
      .selectFrom('dataset_jobs')
      .select('dataset_id')
      .where('id', '=', victimJob)
      .executeTakeFirstOrThrow();
    const killedTable = stagingTableName(killed.dataset_id, victimJob, 1);
    assert.ok((await h.services.records.listTables(killed.dataset_id)).includes(killedTable));
    const ledger = await db
      .selectFrom('dataset_retired_tables')
      .select('table_name')
      .where('table_name', '=', killedTable)
      .execute();
    assert.equal(ledger.length, 1);
    const takenOver = await h.api<{ data: { logData: { message: string } }[] }>(
      'GET',
      `/datasets/jobs/${victimJob}/logs`,
    );
    assert.ok(
      takenOver.json.data.some((l) => /Running again from scratch \(attempt 2\)/.test(l.logData.message)),
      JSON.stringify(takenOver.json.data),
    );
    const owners = await db
      .selectFrom('dataset_jobs')
      .select(['lease_owner'])
      .where('status', '!=', 'Completed')
      .execute();
    assert.deepEqual(owners, []);
    // The survivor did real work and shuts down cleanly when told to.
    assert.match(survivor.output(), /"msg":"job completed"/);
    survivor.kill('SIGTERM');
    assert.equal((await survivor.exited).code, 0);
    // Nothing secret in the workers' logs: no presigned query strings, no AWS secret.
    for (const w of workers) {
      assert.ok(!w.output().includes('X-Amz-Signature'));
      assert.ok(!w.output().includes(S3_TEST_CREDENTIALS.AWS_SECRET_ACCESS_KEY));
    }
  });
});
