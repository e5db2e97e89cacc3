// A job queued by the API wakes a worker in another process at once (storage/db/job-wakeups.ts:
// LISTEN/NOTIFY on PostgreSQL, a watched file beside the database on SQLite), not at its next poll:
// here the worker polls once a minute, so only the wake-up can start its jobs within the test's
// time. A listener whose channel is lost (its connection cut, its file removed) listens again, and
// loses no job meanwhile.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { sql } from 'kysely';
import { onDatabase, type DatabaseTarget } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { uploadAndWait } from '../support/loading.js';
import { eventually } from '../support/poll.js';
import { BIN } from '../support/scale-out.js';
import { startWorkerProcess, type WorkerProcess } from '../support/workers.js';

const PROPS = [
  { name: 'id', type: 'integer' },
  { name: 'name', type: 'string' },
];

/** The API in this process and a worker in another that polls once a minute, for the suite. */
function apiAndWorkerApart(target: DatabaseTarget): { h: Fixture; worker: WorkerProcess } {
  const sides = {} as { h: Fixture; worker: WorkerProcess };
  before(async () => {
    sides.h = await startFixture(target, { ROLES: 'api' });
    sides.worker = startWorkerProcess(BIN, {
      ...sides.h.processEnv,
      WORKER_POLL_MS: '60000',
      LOG_LEVEL: 'info',
    });
    await sides.worker.ready();
  });
  after(async () => {
    sides.worker.kill('SIGKILL');
    await sides.worker.exited;
    await sides.h.close();
  });
  return sides;
}

await onDatabase('postgres', 'a queued job wakes a worker of another process', (target) => {
  const sides = apiAndWorkerApart(target);

  /** The worker's listening session, found by the LISTEN it ran on this schema's channel. */
  const listener = async (): Promise<number | undefined> => {
    const { rows } = await sql<{ pid: number }>`
      select pid from pg_stat_activity
      where query = 'listen "' || 'dx_jobs_' || left(md5(current_schema()), 16) || '"'`.execute(
      sides.h.database.db,
    );
    return rows[0]?.pid;
  };

  it('starts the job at once although the worker polls once a minute', async () => {
    assert.ok(await eventually(async () => (await listener()) !== undefined), 'the worker listens');
    const id = await sides.h.defineDataset(PROPS, ['id']);
    const started = Date.now();
    const job = await uploadAndWait(sides.h, id, 'id,name\n1,a\n2,b\n');
    assert.equal(job.currentStatus.datasetJobStatusName, 'Completed');
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
  });

  it('listens again once its connection is cut, and misses no job', async () => {
    const pid = await listener();
    assert.ok(pid !== undefined);
    await sql`select pg_terminate_backend(${pid})`.execute(sides.h.database.db);
    // Queued while the worker is not listening: its first look after reconnecting finds it.
    const id = await sides.h.defineDataset(PROPS, ['id']);
    const job = await uploadAndWait(sides.h, id, 'id,name\n3,c\n');
    assert.equal(job.currentStatus.datasetJobStatusName, 'Completed');
    assert.ok(
      await eventually(async () => {
        const again = await listener();
        return again !== undefined && again !== pid;
      }),
      'a new listening session',
    );
    assert.match(sides.worker.output(), /job wake-ups from other processes lost/);
  });
});

await onDatabase('sqlite', 'a queued job wakes a worker of another process', (target) => {
  const sides = apiAndWorkerApart(target);

  const loadsWithinSeconds = async (rows: string) => {
    const id = await sides.h.defineDataset(PROPS, ['id']);
    const started = Date.now();
    const job = await uploadAndWait(sides.h, id, `id,name\n${rows}`);
    assert.equal(job.currentStatus.datasetJobStatusName, 'Completed');
    assert.ok(Date.now() - started < 15_000, `took ${Date.now() - started} ms`);
  };

  it('starts the job at once although the worker polls once a minute', async () => {
    await loadsWithinSeconds('1,a\n2,b\n');
  });

  it('watches again once its file is removed, and misses no job', async () => {
    const file = sides.h.processEnv.DATABASE_URL?.replace(/^sqlite:/, '');
    assert.ok(file !== undefined && file !== '');
    rmSync(`${file}-wakeup`);
    assert.ok(
      await eventually(async () => /job wake-ups from other processes lost/.test(sides.worker.output())),
      'the worker tells of the lost watch',
    );
    // The worker watches the file again within a second of losing it, and looks for jobs then.
    await loadsWithinSeconds('3,c\n');
  });
});
