// The swap: in ONE short transaction the dataset points at its new records table, its generation,
// count and last-update time change, the old table goes to the retirement ledger, and the job
// becomes Completed (a schema change swaps its rebuilt table in the same way, swapGeneration). Either all of it happens or none (a crash before commit re-runs the job).
import type { Kysely } from 'kysely';
import type { DatasetRow, Tables } from '../../../storage/db/tables.js';
import { publishBatch } from '../../changes/batches.js';
import { enqueueDatasetChanged } from '../../webhooks/outbox.js';
import { swapGeneration } from '../../datasets/generations.js';
import { nowTimestamp } from '../../../lib/time.js';
import type { Db } from '../../identity/users.js';
import { transitionJobIn } from '../jobs.js';
import { checkModeOnCommit, LOAD_MODE_POLICY } from '../load-modes.js';
import type { ErrorData, LoadMode, LogData } from '../status.js';
import { DatasetChangedMeanwhile, JobFailure, LeaseLostOnCommit } from './failure.js';

export interface CommitRequest {
  datasetId: string;
  jobId: string;
  leaseOwner: string;
  mode: LoadMode;
  /** The dataset's generation when the job started; a mode may need it unchanged. */
  startGeneration: number;
  /** The dataset's schema version when the job started: the commit fails if it moved. */
  startSchemaVersion: number;
  table: string;
  rowsLoaded: number;
  log: LogData;
  /** The defects of the records left out (maxBadRecords), if any. */
  errorData?: ErrorData;
  /** The change-log batch written against the records of `startGeneration`, published with the
   * swap; absent for a dataset without a primary key. */
  changeBatch?: number;
}

/** Makes the loaded table the dataset's records; returns the new generation. */
export async function commitGeneration(db: Kysely<Tables>, req: CommitRequest): Promise<number> {
  // Optimistic: read, then update only if the generation is still the one read. The UPDATE is the
  // transaction's first statement, so SQLite takes its write lock at once (no stale-read upgrade).
  for (let attempt = 0; attempt < 5; attempt++) {
    const ds = await db
      .selectFrom('datasets')
      .select(['generation', 'record_count', 'records_table', 'schema_version'])
      .where('id', '=', req.datasetId)
      .executeTakeFirst();
    if (ds === undefined) throw new JobFailure('The dataset was deleted while loading.');
    if (ds.schema_version !== req.startSchemaVersion) {
      throw new JobFailure(
        await schemaChangedMessage(db, req.datasetId, req.startSchemaVersion, ds.schema_version),
      );
    }
    checkModeOnCommit(req.mode, ds, req.startGeneration);
    // The batch's keys are a diff against the records the job started from: a commit on other
    // records would publish a wrong diff, so the job runs again (only a race of two claimers on
    // PostgreSQL gets here; loads of one dataset otherwise run one at a time).
    if (req.changeBatch !== undefined && ds.generation !== req.startGeneration) {
      throw new DatasetChangedMeanwhile();
    }
    const now = nowTimestamp();
    const outcome = await db.transaction().execute(async (trx) => {
      const swapped = await swapGeneration(trx, {
        datasetId: req.datasetId,
        from: ds,
        table: req.table,
        set: { ...recordsAfter(req), date_last_record_updated: now },
      });
      if (!swapped) return 'retry' as const;
      if (req.changeBatch !== undefined) {
        await publishBatch(trx, req.changeBatch, ds.generation + 1);
        await enqueueDatasetChanged(trx, req.datasetId, ds.generation + 1, now);
      }
      // Throws when another worker owns the job now (our lease lapsed): the swap is undone.
      await completeUnderLease(trx, req);
      return 'done' as const;
    });
    if (outcome === 'done') return ds.generation + 1;
  }
  throw new Error('the dataset kept changing; could not commit the load');
}

/** Why a load fails when the dataset's schema changed while it ran, naming the (last) change. */
async function schemaChangedMessage(db: Db, datasetId: string, from: number, to: number): Promise<string> {
  const row = await db
    .selectFrom('dataset_schemas')
    .select('last_change')
    .where('dataset_id', '=', datasetId)
    .executeTakeFirst();
  const change = row?.last_change ?? 'changed';
  const what = to === from + 1 ? change : `the last change ${change}`;
  return `The dataset's schema changed while this load ran (version ${from} to ${to}: ${what}); nothing was loaded. Load the file again against the new schema.`;
}

/** The dataset's records after the commit, by what the mode does to those it held. */
function recordsAfter(req: CommitRequest): Pick<DatasetRow, 'records_table' | 'record_count'> {
  switch (LOAD_MODE_POLICY[req.mode].existingRecords) {
    case 'replaced':
      return { records_table: req.table, record_count: req.rowsLoaded };
    case 'kept':
    case 'replacedByKey':
    case 'deletedByKey':
      // The table began as a copy of the records of `startGeneration` (checkModeOnCommit made
      // sure they are still the dataset's), so it holds all of them that remain (for a delete:
      // all but those the file's keys named): it replaces the old table whole, as any load does.
      return { records_table: req.table, record_count: req.rowsLoaded };
  }
}

/** Moves the job to Completed with its log (and tolerated defects) while this worker holds its
 * lease; throws LeaseLostOnCommit otherwise (another worker owns the job now). */
export async function completeUnderLease(
  db: Db,
  req: Pick<CommitRequest, 'jobId' | 'leaseOwner' | 'log' | 'errorData'>,
): Promise<void> {
  const completed = await transitionJobIn(
    db,
    { id: req.jobId },
    {
      move: 'completed',
      by: { kind: 'leaseHolder', owner: req.leaseOwner },
      log: req.log,
      ...(req.errorData !== undefined ? { error: req.errorData } : {}),
    },
  );
  if (completed === undefined) throw new LeaseLostOnCommit();
}
