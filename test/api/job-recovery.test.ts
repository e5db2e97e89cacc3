// Jobs survive crashes and shutdowns: lapsed leases re-run from scratch, shutdown releases, and
// deleting a dataset removes every table and file it had.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { stagingTableName } from '../../src/storage/records/index.js';
import { JobNotifier } from '../../src/domain/jobs/notifier.js';
import { startWorker, type Worker } from '../../src/worker/worker.js';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture, type JobBody } from '../support/fixture.js';
import { putFile, requestUpload, uploadAndWait } from '../support/loading.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];
const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };

await forEachDatabase('job recovery', (target) => {
  let h: Fixture;
  let slow: Server;
  let slowUrl = '';
  before(async () => {
    // API only: the tests start and stop workers themselves.
    h = await startFixture(target, { ROLES: 'api', LOAD_URL_ALLOWLIST: '127.0.0.1/32' });
    slow = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/csv' });
      res.write('id,name\n1,a\n');
      const t = setTimeout(() => res.end('2,b\n'), 1500);
      res.on('close', () => clearTimeout(t));
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    slowUrl = `http://127.0.0.1:${(slow.address() as AddressInfo).port}/slow.csv`;
  });
  after(async () => {
    slow.closeAllConnections();
    await new Promise((resolve) => slow.close(resolve));
    await h.close();
  });

  const worker = (): Worker =>
    startWorker({
      config: h.config,
      database: h.service.database,
      objects: h.services.objects,
      records: h.services.records,
      notifier: new JobNotifier(),
      signingSecret: h.services.signingSecret,
      metrics: h.services.metrics,
      log: silent,
    });
  const db = () => h.database.db;
  /** As if a worker had claimed the job `attempts` times, the last time lately, and died. */
  const claimedByDeadWorker = async (jobId: string, attempts: number) =>
    db()
      .updateTable('dataset_jobs')
      .set({ status: 'Running', lease_owner: 'dead-worker', lease_expires_at: Date.now() - 1000, attempts })
      .where('id', '=', jobId)
      .execute();
  const logsOf = async (jobId: string) =>
    (
      await h.api<{ data: { status: string; logData: { message: string } }[] }>(
        'GET',
        `/datasets/jobs/${jobId}/logs`,
      )
    ).json.data;

  void it('re-runs a job whose lease lapsed, dropping its leftover staging table first', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const up = await requestUpload(h, id);
    await putFile(up.url, 'id,name\n1,a\n2,b\n');
    // As if a worker had claimed it, written half a table, and died.
    await claimedByDeadWorker(up.jobId, 1);
    await sql`create table ${sql.table(stagingTableName(id, up.jobId))} (junk integer)`.execute(db());
    const w = worker();
    try {
      const job = await h.waitForJob(up.jobId);
      assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
      assert.equal(job.currentStatus.logData?.rowsLoaded, 2);
    } finally {
      await w.close(1000);
    }
    const row = await db()
      .selectFrom('dataset_jobs')
      .select('attempts')
      .where('id', '=', up.jobId)
      .executeTakeFirstOrThrow();
    assert.equal(row.attempts, 2);
    assert.ok((await logsOf(up.jobId)).some((l) => /attempt 2/.test(l.logData.message)));
  });

  void it('gives up on a job interrupted too often', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const res = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load`, { url: slowUrl });
    await claimedByDeadWorker(res.json.jobId, 3);
    const w = worker();
    try {
      const job = await h.waitForJob(res.json.jobId);
      assert.equal(job.currentStatus.status, 'Failed');
      assert.match(job.currentStatus.logData?.message ?? '', /interrupted 3 times/);
    } finally {
      await w.close(1000);
    }
  });

  void it('releases a running job at shutdown; the next worker completes it', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const res = await h.api<{ jobId: string }>('POST', `/datasets/${id}/records:load`, { url: slowUrl });
    const first = worker();
    for (let i = 0; i < 200; i++) {
      const job = await h.api<JobBody>('GET', `/datasets/jobs/${res.json.jobId}`);
      if (job.json.currentStatus.status === 'Running') break;
      await new Promise((r) => setTimeout(r, 10));
    }
    await first.close(50);
    const released = await h.api<JobBody>('GET', `/datasets/jobs/${res.json.jobId}`);
    assert.equal(released.json.currentStatus.status, 'Queued');
    assert.match(released.json.currentStatus.logData?.message ?? '', /Released at worker shutdown/);
    assert.deepEqual(await h.services.records.listTables(id), []);
    const second = worker();
    try {
      const job = await h.waitForJob(res.json.jobId);
      assert.equal(job.currentStatus.status, 'Completed', JSON.stringify(job.currentStatus));
    } finally {
      await second.close(1000);
    }
  });

  void it('deletes every table, link and file of a deleted dataset', async () => {
    const id = await h.defineDataset(PROPS, ['id']);
    const w = worker();
    try {
      await uploadAndWait(h, id, 'id,name\n1,a\n');
      assert.equal(
        (await h.api('POST', `/datasets/${id}/records:retrieve`, { contentType: 'csv' })).status,
        200,
      );
      await uploadAndWait(h, id, 'id,name\n2,b\n', { mode: 'replace' });
      assert.equal(
        (await h.api('POST', `/datasets/${id}/records:retrieve`, { contentType: 'json' })).status,
        200,
      );
    } finally {
      await w.close(1000);
    }
    assert.equal((await h.services.records.listTables(id)).length, 2, 'current and retired tables');
    const links = () =>
      db().selectFrom('dataset_export_links').select('id').where('dataset_id', '=', id).execute();
    assert.equal((await links()).length, 2, 'one download link per retrieve, each pinning its table');
    assert.equal((await h.api('DELETE', `/datasets/${id}`)).status, 204);
    assert.deepEqual(await links(), []);
    assert.deepEqual(await h.services.records.listTables(id), []);
    assert.deepEqual(await h.services.objects.list(`datasets/${id}/`), []);
    const ledger = await db()
      .selectFrom('dataset_retired_tables')
      .selectAll()
      .where('dataset_id', '=', id)
      .execute();
    assert.deepEqual(ledger, []);
  });
});
