// Every status change of a job goes through transitionJob and writes its status entry: a claim
// writes exactly one Running entry per attempt, concurrent claimers take each job once, and a move
// its job's state or mover does not admit changes nothing. On both engines.
import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../src/storage/db/tables.js';
import { createApp } from '../../src/domain/identity/apps.js';
import { getWorkspace } from '../../src/domain/identity/workspaces.js';
import { createDataset } from '../../src/domain/datasets/datasets.js';
import { claimJob, MAX_ATTEMPTS } from '../../src/domain/jobs/claims.js';
import { createJob, transitionJob } from '../../src/domain/jobs/jobs.js';
import { JOB_MOVES } from '../../src/domain/jobs/moves.js';
import { JOB_STATUSES, type JobStatus } from '../../src/domain/jobs/status.js';
import { forEachDatabase, type IsolatedDatabase } from '../support/databases.js';

const LEASE_MS = 60_000;

await forEachDatabase('job moves', (target) => {
  let isolated: IsolatedDatabase;
  let db: Kysely<Tables>;
  let skipLocked = false;
  /** A Queued job of a dataset of its own, or of `datasetId`. */
  let newQueuedJob: (datasetId?: string) => Promise<DatasetJobRow>;

  beforeEach(async () => {
    isolated = await target.create();
    db = isolated.database.db;
    skipLocked = isolated.database.capabilities.skipLocked;
    // A dataset defined as an app would: its own workspace and installation, one property.
    const app = await createApp(db, { name: 'moves', alg: 'ES256' });
    const workspace = await getWorkspace(db, app.workspaceId);
    const caller = { appId: app.app.id, workspaceId: workspace.id, ownerUserId: workspace.owner_user_id };
    let datasets = 0;
    const newDataset = async () =>
      (
        await createDataset(db, caller, {
          name: `moves ${datasets++}`,
          schema: { properties: [{ name: 'a', type: 'string' }] },
        })
      ).datasetId;
    newQueuedJob = async (datasetId) =>
      createJob(db, {
        datasetId: datasetId ?? (await newDataset()),
        workspaceId: workspace.id,
        createdByUserId: workspace.owner_user_id,
        jobType: 'recordsLoad',
        mode: 'replace',
        contentType: null,
        sourceUrl: 'https://example.com/records.csv',
        status: 'Queued',
        message: 'Queued.',
      });
  });
  afterEach(async () => {
    await isolated.dispose();
  });

  // recordsLoad jobs leave no file behind, so no object store is needed.
  const claim = (owner: string) =>
    claimJob({ db, objects: null as never }, { owner, leaseMs: LEASE_MS, skipLocked });
  const entries = async (jobId: string) =>
    (
      await db
        .selectFrom('dataset_job_logs')
        .select(['status_name', 'status_code', 'log_data', 'error_data'])
        .where('job_id', '=', jobId)
        .orderBy('id')
        .execute()
    ).map((e) => ({
      status: e.status_name,
      code: Number(e.status_code),
      message: (JSON.parse(e.log_data ?? '{}') as { message?: string }).message,
      error: e.error_data === null ? null : (JSON.parse(e.error_data) as unknown),
    }));
  const rowOf = (jobId: string) =>
    db.selectFrom('dataset_jobs').selectAll().where('id', '=', jobId).executeTakeFirstOrThrow();
  const lapseLease = (jobId: string) =>
    db
      .updateTable('dataset_jobs')
      .set({ lease_expires_at: Date.now() - 1000 })
      .where('id', '=', jobId)
      .execute();

  it('a claim takes the oldest ready job and writes its Running entry with it, once', async () => {
    const first = await newQueuedJob();
    const second = await newQueuedJob();
    const claimed = await claim('w1');
    assert.equal(claimed?.id, first.id);
    assert.equal(claimed.status, 'Running');
    assert.equal(claimed.lease_owner, 'w1');
    assert.equal(Number(claimed.attempts), 1);
    assert.ok(Number(claimed.lease_expires_at) > Date.now());
    assert.deepEqual(await entries(first.id), [
      { status: 'Queued', code: 2, message: 'Queued.', error: null },
      { status: 'Running', code: 3, message: 'Loading records.', error: null },
    ]);
    assert.equal((await claim('w2'))?.id, second.id);
    assert.equal(await claim('w3'), undefined);
    assert.equal((await entries(first.id)).length, 2, 'a claim that found nothing wrote nothing');
  });

  it('a lapsed lease is taken over with one Running entry per attempt; a live one is not', async () => {
    const job = await newQueuedJob();
    await claim('w1');
    assert.equal(await claim('w2'), undefined, 'the lease is live');
    await lapseLease(job.id);
    const taken = await claim('w2');
    assert.equal(taken?.id, job.id);
    assert.equal(taken.lease_owner, 'w2');
    assert.equal(Number(taken.attempts), 2);
    const running = (await entries(job.id)).filter((e) => e.status === 'Running');
    assert.deepEqual(
      running.map((e) => e.message),
      ['Loading records.', 'Running again from scratch (attempt 2).'],
    );
    // The worker that lost the lease can neither end nor release the job.
    const byW1 = { kind: 'leaseHolder', owner: 'w1' } as const;
    assert.equal(
      await transitionJob(db, { id: job.id }, { move: 'completed', by: byW1, log: { message: 'x' } }),
      undefined,
    );
    assert.equal(
      await transitionJob(db, { id: job.id }, { move: 'released', by: byW1, log: { message: 'x' } }),
      undefined,
    );
    assert.equal((await entries(job.id)).length, 3);
    assert.equal((await rowOf(job.id)).lease_owner, 'w2');
  });

  it(`a job interrupted ${MAX_ATTEMPTS} times fails instead of running again`, async () => {
    const job = await newQueuedJob();
    await db
      .updateTable('dataset_jobs')
      .set({
        status: 'Running',
        lease_owner: 'dead',
        lease_expires_at: Date.now() - 1000,
        attempts: MAX_ATTEMPTS,
      })
      .where('id', '=', job.id)
      .execute();
    assert.equal(await claim('w1'), undefined);
    const row = await rowOf(job.id);
    assert.equal(row.status, 'Failed');
    assert.equal(Number(row.attempts), MAX_ATTEMPTS + 1);
    assert.equal(row.lease_owner, null);
    assert.equal(row.lease_expires_at, null);
    assert.deepEqual(await entries(job.id), [
      { status: 'Queued', code: 2, message: 'Queued.', error: null },
      {
        status: 'Failed',
        code: 5,
        message: `The job was interrupted ${MAX_ATTEMPTS} times; giving up.`,
        error: { errorCount: 0, errors: [] },
      },
    ]);
  });

  it('a claim passes over a job while another job of its dataset runs, and takes them in order', async () => {
    const first = await newQueuedJob();
    const second = await newQueuedJob(first.dataset_id);
    const third = await newQueuedJob(first.dataset_id);
    const elsewhere = await newQueuedJob();
    assert.equal((await claim('w1'))?.id, first.id);
    // The dataset's next job waits; another dataset's job does not.
    assert.equal((await claim('w2'))?.id, elsewhere.id);
    assert.equal(await claim('w3'), undefined);
    // Its own lapsed lease does not hold a job up: it is taken over, still before the others.
    await lapseLease(first.id);
    assert.equal((await claim('w4'))?.id, first.id);
    assert.equal(await claim('w5'), undefined);
    await transitionJob(
      db,
      { id: first.id },
      { move: 'completed', by: { kind: 'leaseHolder', owner: 'w4' }, log: { message: 'Done.' } },
    );
    assert.equal((await claim('w6'))?.id, second.id);
    assert.equal(await claim('w7'), undefined);
    // A job whose last attempt's lease lapsed is given up, and the next job of its dataset runs.
    await lapseLease(second.id);
    await db
      .updateTable('dataset_jobs')
      .set({ attempts: MAX_ATTEMPTS })
      .where('id', '=', second.id)
      .execute();
    assert.equal((await claim('w8'))?.id, third.id);
  });

  it('concurrent claimers take each ready job exactly once', async () => {
    const jobs = await Promise.all(Array.from({ length: 4 }, () => newQueuedJob()));
    const claimed = await Promise.all(Array.from({ length: 8 }, (_, i) => claim(`w${i}`)));
    const ids = claimed.flatMap((j) => (j === undefined ? [] : [j.id]));
    assert.deepEqual([...ids].sort(), jobs.map((j) => j.id).sort());
    for (const job of jobs) {
      const running = (await entries(job.id)).filter((e) => e.status === 'Running');
      assert.equal(running.length, 1, `job ${job.id}`);
    }
  });

  it('a release puts the job back in the queue without its lease, with its entry', async () => {
    const job = await newQueuedJob();
    await claim('w1');
    const released = await transitionJob(
      db,
      { id: job.id },
      { move: 'released', by: { kind: 'leaseHolder', owner: 'w1' }, log: { message: 'Released.' } },
    );
    assert.equal(released?.status, 'Queued');
    assert.equal(released.lease_owner, null);
    assert.equal(released.lease_expires_at, null);
    assert.deepEqual(
      (await entries(job.id)).map((e) => e.status),
      ['Queued', 'Running', 'Queued'],
    );
  });

  it('moves its state or mover does not admit change nothing and write no entry', async () => {
    const job = await newQueuedJob();
    const target = { id: job.id };
    const log = { message: 'refused' };
    // Queued: not running, not awaiting a file.
    assert.equal(
      await transitionJob(db, target, { move: 'completed', by: { kind: 'leaseHolder', owner: 'w1' }, log }),
      undefined,
    );
    assert.equal(
      await transitionJob(db, target, { move: 'fileReceived', by: { kind: 'service' }, log }),
      undefined,
    );
    assert.equal(
      await transitionJob(db, target, { move: 'uploadExpired', by: { kind: 'service' }, log }),
      undefined,
    );
    await claim('w1');
    // Running: the file was received long ago; another PUT's claim admits nothing.
    assert.equal(
      await transitionJob(db, target, {
        move: 'fileReceived',
        by: { kind: 'uploadClaimHolder', claim: 'put' },
        log,
      }),
      undefined,
    );
    const failed = await transitionJob(db, target, {
      move: 'failed',
      by: { kind: 'leaseHolder', owner: 'w1' },
      log: { message: 'It failed.' },
      error: { errorCount: 1, errors: [{ line: 2, message: 'bad' }] },
    });
    assert.equal(failed?.status, 'Failed');
    // Failed is final: no move starts there.
    await lapseLease(job.id);
    assert.equal(await claim('w2'), undefined);
    assert.equal(
      await transitionJob(db, target, { move: 'released', by: { kind: 'leaseHolder', owner: 'w1' }, log }),
      undefined,
    );
    assert.deepEqual(
      (await entries(job.id)).map((e) => e.status),
      ['Queued', 'Running', 'Failed'],
    );
    assert.equal((await rowOf(job.id)).status, 'Failed');
  });
});

void describe('the job state machine', () => {
  it('leaves Completed, Failed and Expired final, and reaches Running only by a claim', () => {
    const startsSomewhere = (s: JobStatus) =>
      Object.values(JOB_MOVES).some((m) => (m.from as readonly JobStatus[]).includes(s));
    assert.deepEqual(
      JOB_STATUSES.filter((s) => !startsSomewhere(s)),
      ['Completed', 'Failed', 'Expired'],
    );
    assert.deepEqual(
      Object.entries(JOB_MOVES)
        .filter(([, m]) => m.to === 'Running')
        .map(([name]) => name),
      ['claimed'],
    );
  });

  it('refuses at compile time a mover the move does not allow, and a failure without errorData', () => {
    const db = null as unknown as Kysely<Tables>;
    const log = { message: 'x' };
    const compileOnly = () => [
      // @ts-expect-error only the lease holder completes a job
      transitionJob(db, { id: 'j' }, { move: 'completed', by: { kind: 'service' }, log }),
      // @ts-expect-error a move to Failed carries the file's defects (or none)
      transitionJob(db, { id: 'j' }, { move: 'failed', by: { kind: 'leaseHolder', owner: 'w' }, log }),
      transitionJob(
        db,
        { id: 'j' },
        {
          move: 'released',
          by: { kind: 'leaseHolder', owner: 'w' },
          log,
          // @ts-expect-error errorData belongs to failures only
          error: { errorCount: 0, errors: [] },
        },
      ),
    ];
    assert.equal(typeof compileOnly, 'function');
  });
});
