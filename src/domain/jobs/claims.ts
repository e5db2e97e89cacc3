// Claiming jobs with a lease. One UPDATE (transitionJob's `claimed` move) picks the oldest Queued
// job, or a Running one whose lease lapsed (its worker crashed), stamps it with this worker's lease
// and writes its Running entry. Where the database can, the inner SELECT locks the row with SKIP
// LOCKED so many workers share the table without waiting on each other; SQLite serialises writers,
// so the plain UPDATE is already atomic there. A job waits while another load of its dataset runs.
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { DatasetJobRow, Tables } from '../../storage/db/tables.js';
import type { ObjectStore } from '../../storage/objects/index.js';
import { transitionJob } from './jobs.js';
import { nowTimestamp } from '../../lib/time.js';
import { progressColumns, type ProgressFigures } from './load/progress.js';
import { cleanupJob } from './load/run-load.js';
import { NO_DEFECTS } from './status.js';

/** A job interrupted this many times (crashes, lost leases, shutdowns) fails instead of running again. */
export const MAX_ATTEMPTS = 3;

export interface ClaimOptions {
  owner: string;
  leaseMs: number;
  /** Database.capabilities.skipLocked. */
  skipLocked: boolean;
}

/** Claims one job for `owner` until now + leaseMs, or returns undefined when none is ready. Ready
 * jobs interrupted MAX_ATTEMPTS times are ended Failed on the way (and their file deleted). */
export async function claimJob(
  deps: { db: Kysely<Tables>; objects: ObjectStore },
  opts: ClaimOptions,
): Promise<DatasetJobRow | undefined> {
  const by = { kind: 'claimer', owner: opts.owner, leaseMs: opts.leaseMs } as const;
  for (;;) {
    const exhausted = await transitionJob(
      deps.db,
      { oldest: { where: (eb) => eb('attempts', '>=', MAX_ATTEMPTS), skipLocked: opts.skipLocked } },
      {
        move: 'gaveUp',
        by,
        log: { message: `The job was interrupted ${MAX_ATTEMPTS} times; giving up.` },
        error: NO_DEFECTS,
      },
    );
    if (exhausted === undefined) break;
    await cleanupJob(deps, exhausted);
  }
  const now = Date.now();
  return transitionJob(
    deps.db,
    {
      oldest: {
        where: (eb) => eb.and([eb('attempts', '<', MAX_ATTEMPTS), noOtherLoadRunning(eb, now)]),
        skipLocked: opts.skipLocked,
      },
    },
    {
      move: 'claimed',
      by,
      log: (job) => ({
        message:
          job.attempts > 1 ? `Running again from scratch (attempt ${job.attempts}).` : 'Loading records.',
      }),
    },
  );
}

/**
 * Loads into one dataset run one at a time, in queue order: a job is not taken while another job
 * of its dataset is Running under a live lease (append and upsert build on the records the
 * previous load left). Its own lapsed lease does not count: that is the job being taken over.
 * On PostgreSQL two claimers can still race past this (each sees the other's claim only once
 * committed); the commit's generation check is the safety net.
 */
function noOtherLoadRunning(eb: ExpressionBuilder<Tables, 'dataset_jobs'>, now: number): Expression<SqlBool> {
  return eb.not(
    eb.exists(
      eb
        .selectFrom('dataset_jobs as running')
        .select('running.id')
        .whereRef('running.dataset_id', '=', 'dataset_jobs.dataset_id')
        .whereRef('running.id', '!=', 'dataset_jobs.id')
        .where('running.status', '=', 'Running')
        .where('running.lease_expires_at', '>=', now),
    ),
  );
}

/** Extends the lease while the job runs, storing the load's progress in the same UPDATE; false
 * when the lease is no longer ours. */
export async function renewLease(
  db: Kysely<Tables>,
  jobId: string,
  owner: string,
  leaseMs: number,
  progress?: ProgressFigures,
): Promise<boolean> {
  const res = await db
    .updateTable('dataset_jobs')
    .set({
      lease_expires_at: Date.now() + leaseMs,
      ...(progress !== undefined ? progressColumns(progress, nowTimestamp()) : {}),
    })
    .where('id', '=', jobId)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'Running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
