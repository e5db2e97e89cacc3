// Claiming jobs with a lease. One UPDATE picks the oldest Queued job, or a Running one whose lease
// lapsed (its worker crashed), and stamps it with this worker's lease. On PostgreSQL the inner
// SELECT locks the row with SKIP LOCKED so many workers share the table without waiting on each
// other; SQLite serialises writers, so the plain UPDATE is already atomic there.
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../storage/db/tables.js';
import { nowTimestamp } from '../lib/time.js';

/** Claims one job for `owner` until now + leaseMs, or returns undefined when none is ready. */
export async function claimJob(
  db: Kysely<Tables>,
  opts: { owner: string; leaseMs: number; skipLocked: boolean },
): Promise<DatasetJobRow | undefined> {
  const now = Date.now();
  return db
    .updateTable('dataset_jobs')
    .set((eb) => ({
      status: 'Running',
      lease_owner: opts.owner,
      lease_expires_at: now + opts.leaseMs,
      attempts: eb('attempts', '+', 1),
      updated_at: nowTimestamp(),
    }))
    .where('id', '=', (eb) =>
      eb
        .selectFrom('dataset_jobs')
        .select('id')
        .where((w) =>
          w.or([
            w('status', '=', 'Queued'),
            w.and([w('status', '=', 'Running'), w('lease_expires_at', '<', now)]),
          ]),
        )
        .orderBy('created_at')
        .limit(1)
        .$if(opts.skipLocked, (qb) => qb.forUpdate().skipLocked()),
    )
    .returningAll()
    .executeTakeFirst();
}

/** Extends the lease while the job runs; false when the lease is no longer ours. */
export async function renewLease(
  db: Kysely<Tables>,
  jobId: string,
  owner: string,
  leaseMs: number,
): Promise<boolean> {
  const res = await db
    .updateTable('dataset_jobs')
    .set({ lease_expires_at: Date.now() + leaseMs })
    .where('id', '=', jobId)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'Running')
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}
