// The load pipeline shared by both job types: parse the file into a fresh staging table, then
// swap it in. Any failure drops the staging table, so the dataset keeps exactly what it had.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../../storage/db/tables.js';
import {
  stagingTableName,
  type RecordStore,
  type StagingResult,
  type StagingWriter,
} from '../../../storage/records/index.js';
import { datasetSchemaOf } from '../../datasets/datasets.js';
import { tableSchemaOf } from '../../datasets/schema.js';
import { ErrorCollector, parseRecords, type InputFormat } from '../../loading/index.js';
import { buildsOnCurrentRecords, checkModeOnStart, heldKeysAreRowErrors } from '../load-modes.js';
import type { LogData } from '../status.js';
import { retireEarlierAttempts } from './attempts.js';
import { commitGeneration } from './commit.js';
import { JobFailure } from './failure.js';
import { refuseHeldKeys } from './held-keys.js';

export interface LoadContext {
  db: Kysely<Tables>;
  records: RecordStore;
  job: DatasetJobRow;
  leaseOwner: string;
  signal: AbortSignal;
}

/** Loads `input` into the job's dataset and commits it with the job; returns the Completed log. */
export async function loadRecords(ctx: LoadContext, input: Readable, format: InputFormat): Promise<LogData> {
  const { db, job } = ctx;
  const ds = await db
    .selectFrom('datasets')
    .select(['generation', 'record_count', 'records_table'])
    .where('id', '=', job.dataset_id)
    .executeTakeFirst();
  if (ds === undefined) throw new JobFailure('The dataset was deleted.');
  const schema = await datasetSchemaOf(db, job.dataset_id);
  checkModeOnStart(job.mode, { record_count: ds.record_count, primaryKey: schema.primaryKey });
  // append, upsert: the new table starts as a copy of the records of the generation read above.
  const copyFrom = buildsOnCurrentRecords(job.mode) ? ds.records_table : null;
  const tableSchema = tableSchemaOf(schema);
  const errors = new ErrorCollector();
  let staging: StagingWriter | null = null;
  try {
    await retireEarlierAttempts(db, job);
    const table = stagingTableName(job.dataset_id, job.id, job.attempts);
    staging = await ctx.records.createStaging(
      table,
      tableSchema,
      ctx.signal,
      copyFrom !== null ? { copyFrom } : {},
    );
    const stats = { rowsRead: 0 };
    for await (const batch of parseRecords(input, { schema, format, errors, stats, signal: ctx.signal })) {
      const rows =
        copyFrom !== null && heldKeysAreRowErrors(job.mode)
          ? await refuseHeldKeys(ctx.records, copyFrom, tableSchema, batch, errors)
          : batch.rows;
      // After the first defect nothing more is written: the job will fail, but the rest of the
      // file is still read so the caller learns about every defect at once.
      if (errors.count === 0) await staging.write(rows);
    }
    ctx.signal.throwIfAborted();
    if (errors.count > 0) {
      throw new JobFailure(
        `The file has ${errors.count} defect${errors.count === 1 ? '' : 's'} in ${stats.rowsRead} records read; nothing was loaded.`,
        {
          errorCount: errors.count,
          errors: errors.errors,
        },
      );
    }
    const result = await staging.finish();
    const log: LogData = {
      message: loadedMessage(result, buildsOnCurrentRecords(job.mode)),
      rowsRead: stats.rowsRead,
      rowsLoaded: result.rowsLoaded,
      duplicatesCollapsed: result.duplicatesCollapsed,
      ...(buildsOnCurrentRecords(job.mode) ? recordsChanged(result) : {}),
    };
    await commitGeneration(db, {
      datasetId: job.dataset_id,
      jobId: job.id,
      leaseOwner: ctx.leaseOwner,
      mode: job.mode,
      startGeneration: ds.generation,
      table: staging.table,
      rowsLoaded: result.rowsLoaded,
      log,
    });
    return log;
  } catch (err) {
    if (staging !== null) await staging.abort();
    throw err;
  }
}

/** What the file did to a dataset whose records it built on (append, upsert). */
function recordsChanged(result: StagingResult): Pick<LogData, 'recordsAdded' | 'recordsReplaced'> {
  const replaced = result.rowsReplaced;
  return {
    recordsAdded: result.rowsWritten - result.duplicatesCollapsed - replaced,
    recordsReplaced: replaced,
  };
}

function loadedMessage(result: StagingResult, builtOnRecords: boolean): string {
  if (!builtOnRecords) return `Loaded ${result.rowsLoaded} records.`;
  const { recordsAdded, recordsReplaced } = recordsChanged(result);
  return `Added ${recordsAdded} records and replaced ${recordsReplaced}; the dataset holds ${result.rowsLoaded}.`;
}
