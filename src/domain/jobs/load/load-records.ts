// The load pipeline shared by both job types: parse the file into a fresh staging table, storing
// every defect as it goes, then swap the table in (or, for a dry run, drop it and report). Any
// failure drops the staging table, so the dataset keeps exactly what it had.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../../storage/db/tables.js';
import {
  stagingTableName,
  type RecordStore,
  type StagingOptions,
  type StagingWriter,
} from '../../../storage/records/index.js';
import { discardBatch } from '../../changes/batches.js';
import { captureLoadChanges } from '../../changes/capture.js';
import { datasetWithSchema } from '../../datasets/datasets.js';
import { tableSchemaOf } from '../../datasets/schema.js';
import {
  ErrorCollector,
  InputFailure,
  MAX_KEPT_ERRORS,
  type InvalidUtf8,
  parseRecords,
  type InputFormat,
  type ParseStats,
} from '../../loading/index.js';
import { buildsOnCurrentRecords, checkModeOnStart, fileFields, heldKeysAreRowErrors } from '../load-modes.js';
import { loadOptionsOf } from '../load-options.js';
import { RowErrorLog } from '../row-errors.js';
import type { ErrorData, LogData } from '../status.js';
import { retireEarlierAttempts } from './attempts.js';
import { commitGeneration, type CommitRequest } from './commit.js';
import { completeDryRun } from './dry-run.js';
import { JobFailure } from './failure.js';
import type { LoadProgress } from './progress.js';
import { refuseHeldKeys } from './held-keys.js';
import { completedMessage, failureMessage, recordChanges } from './outcome.js';

export interface LoadContext {
  db: Kysely<Tables>;
  records: RecordStore;
  job: DatasetJobRow;
  leaseOwner: string;
  signal: AbortSignal;
  /** Live counters the worker stores as the job's progress; told when the whole file is read. */
  progress?: LoadProgress;
  /** How bytes become text: bytes that are not UTF-8, the bound on a gzip file's inflated size. */
  text?: { invalidUtf8: InvalidUtf8; maxInflatedBytes: number };
  /** false: the change feed is off (CHANGES_RETENTION_HOURS=0) and the load records no changes. */
  recordChanges?: boolean;
}

/** Loads `input` into the job's dataset and commits it with the job; returns the Completed log. */
export async function loadRecords(ctx: LoadContext, input: Readable, format: InputFormat): Promise<LogData> {
  const { db, job } = ctx;
  const options = loadOptionsOf(job);
  // The dataset and its schema in one read: the load runs against this schema version, and its
  // commit fails if a schema change moved it meanwhile (commit.ts).
  const found = await datasetWithSchema(db, job.dataset_id);
  if (found === undefined) throw new JobFailure('The dataset was deleted.');
  const { row: ds, schema } = found;
  checkModeOnStart(job.mode, { record_count: ds.record_count, primaryKey: schema.primaryKey });
  // append, upsert, delete: the new table starts as a copy of the records of the generation read above.
  const copyFrom = buildsOnCurrentRecords(job.mode) ? ds.records_table : null;
  // delete: the file holds keys, written after the copy and deleted with the records they name.
  const fields = fileFields(job.mode);
  const stagingOptions: StagingOptions = {
    ...(copyFrom !== null ? { copyFrom } : {}),
    writes: fields === 'primaryKey' ? 'keysToDelete' : 'records',
  };
  const tableSchema = tableSchemaOf(schema);
  const errors = new ErrorCollector();
  const rowErrors = await RowErrorLog.open(db, job);
  // Bad records are left out as long as there are no more than the job tolerates; a defect of
  // the file as a whole (its header, its structure) is never tolerated.
  const withinTolerance = () => errors.fileErrors === 0 && errors.rowsRejected <= options.maxBadRecords;
  let staging: StagingWriter | null = null;
  // The change log's batch of this load, unpublished until its commit (changes/batches.ts).
  let changeBatch: number | null = null;
  try {
    await retireEarlierAttempts(db, job);
    const table = stagingTableName(job.dataset_id, job.id, job.attempts);
    staging = await ctx.records.createStaging(table, tableSchema, ctx.signal, stagingOptions);
    const stats: ParseStats = ctx.progress?.stats ?? { rowsRead: 0 };
    const parse = parseRecords(input, {
      schema,
      fields,
      format,
      errors,
      stats,
      signal: ctx.signal,
      ...ctx.text,
    });
    try {
      for await (const batch of parse) {
        // append: records whose key the dataset holds are row errors, left out like any bad record.
        const rows =
          copyFrom !== null && heldKeysAreRowErrors(job.mode)
            ? await refuseHeldKeys(ctx.records, copyFrom, tableSchema, batch, errors)
            : batch.rows;
        // Past the tolerance nothing more is written: the job will fail, but the rest of the file
        // is still read so the caller learns about every defect at once.
        if (withinTolerance() && rows.length > 0) await staging.write(rows);
        await rowErrors.save(errors.take());
      }
    } catch (err) {
      if (!(err instanceof InputFailure)) throw err;
      // The bytes themselves are broken (a truncated gzip stream, one that inflates too far): the
      // job fails saying so, with the defects found in what could be read.
      await rowErrors.save(errors.take());
      const errorData =
        errors.count > 0
          ? { errorCount: errors.count, errors: await rowErrors.first(MAX_KEPT_ERRORS) }
          : null;
      throw new JobFailure(err.message, errorData, {
        rowsRead: stats.rowsRead,
        rowsRejected: errors.rowsRejected,
      });
    }
    await rowErrors.save(errors.take());
    ctx.signal.throwIfAborted();
    await ctx.progress?.parsed();
    const errorData: ErrorData | undefined =
      errors.count > 0
        ? { errorCount: errors.count, errors: await rowErrors.first(MAX_KEPT_ERRORS) }
        : undefined;
    const counts = { rowsRead: stats.rowsRead, rowsRejected: errors.rowsRejected };
    if (!withinTolerance()) {
      throw new JobFailure(failureMessage(job.mode, errors, stats, options), errorData ?? null, counts);
    }
    const result = await staging.finish();
    const log: LogData = {
      message: completedMessage(job.mode, result, errors.rowsRejected, options),
      ...counts,
      rowsLoaded: result.rowsLoaded,
      duplicatesCollapsed: result.duplicatesCollapsed,
      ...recordChanges(job.mode, result),
    };
    const end: Omit<CommitRequest, 'table' | 'rowsLoaded'> = {
      datasetId: job.dataset_id,
      jobId: job.id,
      leaseOwner: ctx.leaseOwner,
      mode: job.mode,
      startGeneration: ds.generation,
      startSchemaVersion: ds.schema_version,
      log,
      ...(errorData !== undefined ? { errorData } : {}),
    };
    try {
      if (options.dryRun) {
        await staging.abort();
        await completeDryRun(db, end);
      } else {
        changeBatch =
          ctx.recordChanges === false
            ? null
            : await captureLoadChanges(db, ctx.records, {
                datasetId: job.dataset_id,
                mode: job.mode,
                schema: tableSchema,
                table: staging.table,
                previous: ds.records_table,
                rows: Math.max(result.rowsLoaded, Number(ds.record_count)),
              });
        await commitGeneration(db, {
          ...end,
          table: staging.table,
          rowsLoaded: result.rowsLoaded,
          ...(changeBatch !== null ? { changeBatch } : {}),
        });
      }
    } catch (err) {
      // The mode refused the commit: the job fails with the defects it found all the same.
      if (err instanceof JobFailure && err.errorData === null && errorData !== undefined) {
        throw new JobFailure(err.message, errorData, counts);
      }
      throw err;
    }
    return log;
  } catch (err) {
    if (staging !== null) await staging.abort();
    if (changeBatch !== null) await discardBatch(db, ctx.records, job.dataset_id, changeBatch);
    throw err;
  }
}
