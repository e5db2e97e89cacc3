// What a load writes into its dataset's change log, by what its mode does to the records held
// (LOAD_MODE_POLICY): a new mode's case fails to compile here until it says which keys it changes.
import type { Kysely } from 'kysely';
import type { Tables } from '../../storage/db/tables.js';
import {
  changesTableName,
  type ChangeCapture,
  type RecordStore,
  type TableSchema,
} from '../../storage/records/index.js';
import { LOAD_MODE_POLICY, type ExistingRecords } from '../jobs/load-modes.js';
import type { LoadMode } from '../jobs/status.js';
import { discardBatch, openBatch } from './batches.js';

/** A finished staging table and what it follows. */
export interface StagedLoad {
  datasetId: string;
  mode: LoadMode;
  schema: TableSchema;
  table: string;
  /** The dataset's records table when the job started (null: never loaded). */
  previous: string | null;
  /** About how many records the larger of the two tables holds. */
  rows: number;
}

/**
 * Opens a batch and writes the load's changed keys under it; returns the batch (published by the
 * commit) or null for a dataset without a primary key, which keeps no change log. A failure
 * discards the batch. A dataset's first load changes every record it loads: its batch
 * (`firstLoad`) names them by the records table itself, and no key is written (a million keys
 * written into the log's two indexes cost more than the load).
 */
export async function captureLoadChanges(
  db: Kysely<Tables>,
  records: RecordStore,
  load: StagedLoad,
): Promise<number | null> {
  if (load.schema.primaryKey.length === 0) return null;
  const keys = keysChangedBy(LOAD_MODE_POLICY[load.mode].existingRecords);
  const firstLoad = load.previous === null && keys.changed !== 'none';
  const batch = await openBatch(db, load.datasetId, firstLoad ? 'firstLoad' : 'records');
  try {
    // A first load's capture writes nothing; it still makes the log, which later batches read.
    await records.captureChanges({
      changesTable: changesTableName(load.datasetId),
      batch,
      schema: load.schema,
      table: load.table,
      previous: load.previous,
      rows: load.rows,
      ...(firstLoad ? { changed: 'none', removed: false } : keys),
    });
    return batch;
  } catch (err) {
    await discardBatch(db, records, load.datasetId, batch);
    throw err;
  }
}

/** Which rows of the new table can be changes, and whether keys it lost are. */
function keysChangedBy(existing: ExistingRecords): Pick<ChangeCapture, 'changed' | 'removed'> {
  switch (existing) {
    case 'replaced':
      // create, replace: a diff against what was there; an unchanged record is no change.
      return { changed: 'all', removed: true };
    case 'kept':
    case 'replacedByKey':
      // append, upsert: only the file's rows (numbered after the copy) can differ from the copy;
      // one equal to the record it replaces is no change.
      return { changed: 'writtenAfterCopy', removed: false };
    case 'deletedByKey':
      // delete: the keys the copy lost; keys that named no record are not changes.
      return { changed: 'none', removed: true };
  }
}
