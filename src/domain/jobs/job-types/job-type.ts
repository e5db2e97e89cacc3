// What a job type contributes: where its file comes from, and what to clean up once it ends.
import type { Readable } from 'node:stream';
import type { Config } from '../../../config.js';
import type { DatasetJobRow } from '../../../storage/db/tables.js';
import type { ObjectStore } from '../../../storage/objects/index.js';
import type { InputFormat } from '../../loading/index.js';

/** Everything a job type may use to open its file. */
export interface JobTypeContext {
  job: DatasetJobRow;
  config: Config;
  objects: ObjectStore;
  /** The service's signing secret: a recordsLoad job's URL is sealed under a key derived from it. */
  signingSecret: string;
  signal: AbortSignal;
}

/** The file to load and how to read it. */
export interface JobSource {
  body: Readable;
  format: InputFormat;
  /** The file's size in bytes when known before reading it (progress shows a total), else null. */
  size: number | null;
}

/** One module per job type (JOB_TYPE_MODULES). */
export interface JobTypeModule {
  open(ctx: JobTypeContext): Promise<JobSource>;
  /** Runs after the job ended (Completed or Failed), never after a release for a re-run. */
  cleanup(ctx: Pick<JobTypeContext, 'job' | 'objects'>): Promise<void>;
}
