// A job re-run after a lapsed lease loads into a table of its own attempt. The tables of earlier
// attempts are not dropped here: their worker may be stalled rather than dead, still holding the
// table mid-COPY, and dropping it would wait on that worker. They go to the retirement ledger
// instead, and the sweep drops them once the grace period has passed.
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../../storage/db/tables.js';
import { stagingTableName } from '../../../storage/records/index.js';

/** Puts the staging tables of the job's earlier attempts in the retirement ledger. */
export async function retireEarlierAttempts(db: Kysely<Tables>, job: DatasetJobRow): Promise<void> {
  if (job.attempts <= 1) return;
  const now = Date.now();
  const rows = Array.from({ length: job.attempts - 1 }, (_, i) => ({
    table_name: stagingTableName(job.dataset_id, job.id, i + 1),
    dataset_id: job.dataset_id,
    retired_at: now,
  }));
  await db
    .insertInto('dataset_retired_tables')
    .values(rows)
    .onConflict((oc) => oc.column('table_name').doNothing())
    .execute();
}
