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
