// A worker that stalls (SIGSTOP: alive, connections open) long enough to lose its lease, while a
// second worker process takes the job over, then resumes (SIGCONT). The job must still complete
// once with all its rows, the stalled worker must give up without touching the other's work or
// crashing, and only the committed table may remain. Each test runs one stack with fresh workers.
import { afterEach, beforeEach, it } from 'node:test';
import assert from 'node:assert/strict';
import { onDatabase } from '../support/databases.js';
import { eventually } from '../support/poll.js';
import { startScaleOutStack, type ScaleOutStack } from '../support/scale-out.js';
import { startSlowCsvServer, type SlowCsvServer } from '../support/workers.js';
import { stagingTableName } from '../../src/storage/records/index.js';

const ROWS = 3000;
await onDatabase('postgres', 'a stalled worker loses its lease to another worker process', (target) => {
  let stack: ScaleOutStack;
  let slow: SlowCsvServer;
  beforeEach(async () => {
    stack = await startScaleOutStack(target);
    // Six seconds per file: long enough to freeze a worker in the middle of it.
    slow = await startSlowCsvServer(ROWS, 6000);
  });
  afterEach(async () => {
    await stack.close();
    await slow.close();
  });

  // Frozen right after the claim (before its staging table exists), or while its COPY is open.
  for (const freeze of ['on claiming the job', 'while it copies rows'] as const) {
    it(`when frozen ${freeze}, the job still completes once`, { timeout: 240_000 }, async () => {
      const { h } = stack;
      const db = h.database.db;
      const props = [
        { name: 'id', type: 'integer' },
        { name: 'name', type: 'string' },
      ];
      const datasetId = await h.defineDataset(props, ['id']);
      const res = await h.api<{ jobId: string }>('POST', `/datasets/${datasetId}/records:load`, {
        url: `${slow.url}/stalled.csv`,
      });
      const jobId = res.json.jobId;
      const lease = async () =>
        db
          .selectFrom('dataset_jobs')
          .select(['lease_owner', 'attempts'])
          .where('id', '=', jobId)
          .executeTakeFirstOrThrow();
      const ownedBy = (pid: number) => async () => (await lease()).lease_owner?.includes(`:${pid}:`) === true;

      const stalled = stack.worker({ WORKER_CONCURRENCY: '1' });
      await stalled.ready();
      assert.ok(await eventually(ownedBy(stalled.pid)), 'the first worker never claimed the job');
      if (freeze === 'while it copies rows') {
        const firstTable = stagingTableName(datasetId, jobId, 1);
        assert.ok(
          await eventually(async () => (await h.services.records.listTables(datasetId)).includes(firstTable)),
        );
        await new Promise((r) => setTimeout(r, 300));
      }
      stalled.kill('SIGSTOP');
      const rescuer = stack.worker({ WORKER_CONCURRENCY: '1' });
      await rescuer.ready();
      assert.ok(await eventually(ownedBy(rescuer.pid)), 'the second worker never took the job over');
      assert.equal((await lease()).attempts, 2);
      await new Promise((r) => setTimeout(r, 1000));
      stalled.kill('SIGCONT');

      const job = await h.waitForJob(jobId, 60_000);
      assert.equal(job.currentStatus.datasetJobStatusName, 'Completed', JSON.stringify(job.currentStatus));
      assert.equal(job.currentStatus.logData?.rowsLoaded, ROWS);
      const logs = await h.api<{ data: { datasetJobStatusName: string }[] }>(
        'GET',
        `/datasets/jobs/${jobId}/logs`,
      );
      const names = logs.json.data.map((l) => l.datasetJobStatusName);
      assert.equal(names.filter((n) => n === 'Completed' || n === 'Failed').length, 1, names.join(','));
      assert.equal(
        (await h.api<{ recordCount: number }>('GET', `/datasets/${datasetId}`)).json.recordCount,
        ROWS,
      );

      // The stalled worker noticed, dropped its own attempt's table (and nothing else) ...
      assert.ok(
        await eventually(async () => stalled.output().includes('job lease lost'), 10_000),
        stalled.output(),
      );
      const current = (
        await db
          .selectFrom('datasets')
          .select('records_table')
          .where('id', '=', datasetId)
          .executeTakeFirstOrThrow()
      ).records_table;
      let tables: string[] = [];
      await eventually(
        async () => (tables = await h.services.records.listTables(datasetId)).length === 1,
        10_000,
      );
      assert.deepEqual(tables, [current]);
      // ... lived through it, and still shuts down cleanly.
      stalled.kill('SIGTERM');
      assert.deepEqual(await stalled.exited, { code: 0, signal: null }, stalled.output());
    });
  }
});
