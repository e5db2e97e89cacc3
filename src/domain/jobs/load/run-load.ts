// A claimed job, run by the worker holding its lease: its file is opened as its type says, loaded
// and committed; the job then ends Completed (and its file is deleted), Failed, or is released back
// to the queue. The worker role drives these steps and decides which ending applies.
import { pipeline, type Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import { changeFeedOn, type Config } from '../../../config.js';
import type { DatasetJobRow, Tables } from '../../../storage/db/tables.js';
import type { ObjectStore } from '../../../storage/objects/index.js';
import type { RecordStore } from '../../../storage/records/index.js';
import { JOB_TYPE_MODULES } from '../job-types/index.js';
import { transitionJob } from '../jobs.js';
import { NO_DEFECTS, type LogData } from '../status.js';
import type { JobFailure } from './failure.js';
import { loadRecords } from './load-records.js';
import { LoadProgress } from './progress.js';

export interface RunLoadDeps {
  config: Config;
  db: Kysely<Tables>;
  objects: ObjectStore;
  records: RecordStore;
  /** Unseals a recordsLoad job's URL (source-url.ts). */
  signingSecret: string;
}

/** Opens the job's file and loads it, committed with the job's Completed move; returns its log.
 * `progress` counts the file's bytes as they arrive (before gunzip) and its records as parsed. */
export async function loadJob(
  deps: RunLoadDeps,
  job: DatasetJobRow,
  leaseOwner: string,
  signal: AbortSignal,
  progress: LoadProgress = new LoadProgress(),
): Promise<LogData> {
  let body: Readable | null = null;
  let counted: Readable | null = null;
  try {
    const source = await JOB_TYPE_MODULES[job.job_type].open({
      job,
      config: deps.config,
      objects: deps.objects,
      signingSecret: deps.signingSecret,
      signal,
    });
    body = source.body;
    await progress.open(source.size);
    // pipeline hands the body's error on to the counter, which the parser reads. Either can fail
    // before the parser reads it (the job stopped while its table was being made): that must end
    // this job, not the process, so neither error goes unheard.
    counted = pipeline(body, progress.counter(), () => undefined);
    body.on('error', () => undefined);
    counted.on('error', () => undefined);
    return await loadRecords(
      {
        db: deps.db,
        records: deps.records,
        job,
        leaseOwner,
        signal,
        progress,
        text: {
          invalidUtf8: deps.config.loadInvalidUtf8,
          maxInflatedBytes: deps.config.maxInflatedBytes,
        },
        recordChanges: changeFeedOn(deps.config),
      },
      counted,
      source.format,
    );
  } finally {
    body?.destroy();
    counted?.destroy();
  }
}

/** Deletes what the job's type leaves behind once the job ended (an upload's file). */
export async function cleanupJob(deps: Pick<RunLoadDeps, 'objects'>, job: DatasetJobRow): Promise<void> {
  await JOB_TYPE_MODULES[job.job_type].cleanup({ job, objects: deps.objects });
}

/** Ends the job Failed and deletes its file; only while this worker still holds the lease, since a
 * worker whose lease lapsed must not take the file away from the one now running the job. */
export async function failJob(
  deps: Pick<RunLoadDeps, 'db' | 'objects'>,
  job: DatasetJobRow,
  leaseOwner: string,
  failure: JobFailure,
): Promise<void> {
  const ended = await transitionJob(
    deps.db,
    { id: job.id },
    {
      move: 'failed',
      by: { kind: 'leaseHolder', owner: leaseOwner },
      log: { message: failure.message, ...failure.counts },
      error: failure.errorData ?? NO_DEFECTS,
    },
  );
  if (ended !== undefined) await cleanupJob(deps, job);
}

/** Why a job goes back to the queue, as its status entry says. */
export const RELEASE_MESSAGES = {
  shutdown: 'Released at worker shutdown; it will run again from scratch.',
  datasetChanged:
    'Another load of the dataset committed while this job ran; it will run again from scratch on the new records.',
} as const;

/** Puts the job back in the queue (its worker shuts down, or the records it built on changed); it
 * runs again from scratch. */
export async function releaseJob(
  db: Kysely<Tables>,
  jobId: string,
  leaseOwner: string,
  why: keyof typeof RELEASE_MESSAGES = 'shutdown',
): Promise<void> {
  await transitionJob(
    db,
    { id: jobId },
    {
      move: 'released',
      by: { kind: 'leaseHolder', owner: leaseOwner },
      log: { message: RELEASE_MESSAGES[why] },
    },
  );
}
