// How many jobs are in a state: the figures of the job gauges (/metrics) and of the operator's
// health page, read from the one table every process shares.
import type { Kysely } from 'kysely';
import { formatMicros } from '../../lib/time.js';
import type { JobStatus, Tables } from '../../storage/db/tables.js';

/** Jobs whose status is `status` now, in every process. */
export async function countJobsInState(db: Kysely<Tables>, status: JobStatus): Promise<number> {
  const row = await db
    .selectFrom('dataset_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', status)
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Jobs that failed since `sinceMs` (epoch milliseconds); a failed job's updated_at is when it failed. */
export async function countJobsFailedSince(db: Kysely<Tables>, sinceMs: number): Promise<number> {
  const row = await db
    .selectFrom('dataset_jobs')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('status', '=', 'Failed')
    // Timestamps are fixed-width ISO text: comparing them as strings compares the instants.
    .where('updated_at', '>=', formatMicros(BigInt(sinceMs) * 1000n))
    .executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** When the job that has waited longest for a worker was queued (its updated_at: the move to
 * Queued, or back to it after a lapsed lease), or null when none waits. */
export async function oldestQueuedSince(db: Kysely<Tables>): Promise<string | null> {
  const row = await db
    .selectFrom('dataset_jobs')
    .select((eb) => eb.fn.min('updated_at').as('since'))
    .where('status', '=', 'Queued')
    .executeTakeFirst();
  return row?.since ?? null;
}

/** What the running jobs' leases say of the workers: how many hold a live lease now, and how many
 * running jobs have a lapsed one (their worker stopped renewing it: it died or hangs; another worker
 * takes the job over). An idle worker holds no lease and writes nothing, so it is not seen here. */
export async function runningLeases(
  db: Kysely<Tables>,
  nowMs: number,
): Promise<{ busyWorkers: number; lapsed: number }> {
  const rows = await db
    .selectFrom('dataset_jobs')
    .select(['lease_owner', 'lease_expires_at'])
    .where('status', '=', 'Running')
    .execute();
  const live = rows.filter((r) => r.lease_expires_at !== null && Number(r.lease_expires_at) >= nowMs);
  return {
    busyWorkers: new Set(live.map((r) => r.lease_owner)).size,
    lapsed: rows.length - live.length,
  };
}
