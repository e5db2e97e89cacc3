// The load pipeline shared by both job types: parse the file into a fresh staging table, then
// swap it in. Any failure drops the staging table, so the dataset keeps exactly what it had.
import type { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../../storage/db/tables.js';
import { stagingTableName, type RecordStore, type StagingWriter } from '../../../storage/records/index.js';
import { datasetSchemaOf } from '../../datasets/datasets.js';
import { tableSchemaOf } from '../../datasets/schema.js';
import { ErrorCollector, parseRecords, type InputFormat } from '../../loading/index.js';
import { checkModeOnStart } from '../load-modes.js';
import type { LogData } from '../status.js';
import { retireEarlierAttempts } from './attempts.js';
import { commitGeneration } from './commit.js';
import { JobFailure } from './failure.js';
import type { LoadProgress } from './progress.js';

export interface LoadContext {
  db: Kysely<Tables>;
  records: RecordStore;
  job: DatasetJobRow;
  leaseOwner: string;
  signal: AbortSignal;
  /** Live counters the worker stores as the job's progress; told when the whole file is read. */
  progress?: LoadProgress;
}

/** Loads `input` into the job's dataset and commits it with the job; returns the Completed log. */
export async function loadRecords(ctx: LoadContext, input: Readable, format: InputFormat): Promise<LogData> {
  const { db, job } = ctx;
  const ds = await db
    .selectFrom('datasets')
    .select(['generation', 'record_count'])
    .where('id', '=', job.dataset_id)
    .executeTakeFirst();
  if (ds === undefined) throw new JobFailure('The dataset was deleted.');
  checkModeOnStart(job.mode, ds);
  const schema = await datasetSchemaOf(db, job.dataset_id);
  const errors = new ErrorCollector();
  let staging: StagingWriter | null = null;
  try {
    await retireEarlierAttempts(db, job);
    const table = stagingTableName(job.dataset_id, job.id, job.attempts);
    staging = await ctx.records.createStaging(table, tableSchemaOf(schema), ctx.signal);
    const stats = ctx.progress?.stats ?? { rowsRead: 0 };
    for await (const batch of parseRecords(input, { schema, format, errors, stats, signal: ctx.signal })) {
      // After the first defect nothing more is written: the job will fail, but the rest of the
      // file is still read so the caller learns about every defect at once.
      if (errors.count === 0) await staging.write(batch.rows);
    }
    ctx.signal.throwIfAborted();
    await ctx.progress?.parsed();
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
      message: `Loaded ${result.rowsLoaded} records.`,
      rowsRead: stats.rowsRead,
      rowsLoaded: result.rowsLoaded,
      duplicatesCollapsed: result.duplicatesCollapsed,
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
