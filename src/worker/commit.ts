// The swap: in ONE short transaction the dataset points at its new records table, its generation,
// count and last-update time change, the old table goes to the retirement ledger, and the job
// becomes Completed. Either all of it happens or none (a crash before commit re-runs the job).
import type { Kysely } from 'kysely';
import type { Tables } from '../storage/db/tables.js';
import { nowTimestamp } from '../lib/time.js';
import { transitionJobIn } from '../domain/jobs/jobs.js';
import type { LoadMode, LogData } from '../domain/jobs/status.js';
import { JobFailure } from './failure.js';

export interface CommitRequest {
  datasetId: string;
  jobId: string;
  leaseOwner: string;
  mode: LoadMode;
  /** The dataset's generation when the job started; create mode needs it unchanged. */
  startGeneration: number;
  table: string;
  rowsLoaded: number;
  log: LogData;
}

/** Makes the loaded table the dataset's records; returns the new generation. */
export async function commitGeneration(db: Kysely<Tables>, req: CommitRequest): Promise<number> {
  // Optimistic: read, then update only if the generation is still the one read. The UPDATE is the
  // transaction's first statement, so SQLite takes its write lock at once (no stale-read upgrade).
  for (let attempt = 0; attempt < 5; attempt++) {
    const ds = await db
      .selectFrom('datasets')
      .select(['generation', 'record_count', 'records_table'])
      .where('id', '=', req.datasetId)
      .executeTakeFirst();
    if (ds === undefined) throw new JobFailure('The dataset was deleted while loading.');
    if (req.mode === 'create' && (Number(ds.record_count) > 0 || ds.generation !== req.startGeneration)) {
      throw new JobFailure(
        'Records were loaded into the dataset while this job ran; mode=create needs an empty dataset.',
      );
    }
    const now = nowTimestamp();
    const outcome = await db.transaction().execute(async (trx) => {
      const res = await trx
        .updateTable('datasets')
        .set({
          records_table: req.table,
          generation: ds.generation + 1,
          record_count: req.rowsLoaded,
          date_last_record_updated: now,
        })
        .where('id', '=', req.datasetId)
        .where('generation', '=', ds.generation)
        .executeTakeFirst();
      if (Number(res.numUpdatedRows) !== 1) return 'retry' as const;
      if (ds.records_table !== null && ds.records_table !== req.table) {
        await trx
          .insertInto('dataset_retired_tables')
          .values({ table_name: ds.records_table, dataset_id: req.datasetId, retired_at: Date.now() })
          .execute();
      }
      const completed = await transitionJobIn(trx, req.jobId, {
        to: 'Completed',
        from: ['Running'],
        leaseOwner: req.leaseOwner,
        log: req.log,
        clearLease: true,
      });
      // Another worker owns the job now (our lease lapsed): undo the swap, leave it to them.
      if (!completed) throw new LeaseLostOnCommit();
      return 'done' as const;
    });
    if (outcome === 'done') return ds.generation + 1;
  }
  throw new Error('the dataset kept changing; could not commit the load');
}

/** The job's lease lapsed before the commit; the swap was rolled back. */
export class LeaseLostOnCommit extends Error {
  constructor() {
    super('the job lease was lost before commit');
  }
}
