// A load job's outcome as a typed result: polled with backoff until it reaches a final state.
import type { FinalJobStatus, Job, JobLog, RowError } from './types.js';

/** What every final job tells. */
interface OutcomeBase {
  jobId: string;
  /** The job as last read. */
  job: Job;
  /** The final status entry's message. */
  message: string;
  /** The first (up to 100) defects in line order; `errorCount` counts them all. */
  errors: RowError[];
  errorCount: number;
  /** A signed CSV (1 hour) of the rejected rows with their original text, when there were any. */
  rejectedRowsUrl: string | null;
}

/** A job that ended: loaded (perhaps leaving bad records out), failed, or never got its file. */
export type JobResult =
  | (OutcomeBase & { status: 'Completed'; log: JobLog })
  | (OutcomeBase & { status: 'Failed'; log: JobLog | null })
  | (OutcomeBase & { status: 'Expired'; log: JobLog | null });

/** The final states; a missing or extra one fails to compile. */
const FINAL: Record<FinalJobStatus, true> = { Completed: true, Failed: true, Expired: true };

/** Whether the job has reached a final state. */
export function isFinal(job: Job): boolean {
  return Object.hasOwn(FINAL, job.currentStatus.datasetJobStatusName);
}

/** The typed outcome of a job in a final state. */
export function resultOf(job: Job): JobResult {
  const status = job.currentStatus;
  const base: OutcomeBase = {
    jobId: job.datasetJobId,
    job,
    message: status.logData?.message ?? '',
    errors: status.errorData?.errors ?? [],
    errorCount: status.errorData?.errorCount ?? 0,
    rejectedRowsUrl: job.rejectedRowsUrl,
  };
  const name = status.datasetJobStatusName as FinalJobStatus;
  switch (name) {
    case 'Completed':
      return { ...base, status: name, log: status.logData ?? { message: '' } };
    case 'Failed':
    case 'Expired':
      return { ...base, status: name, log: status.logData };
  }
}

export interface WaitOptions {
  /** Called with the job after every read (its `progress` drives a progress bar). */
  onPoll?: (job: Job) => void;
  /** First wait between reads; default 200 ms. */
  initialIntervalMs?: number;
  /** Longest wait between reads; default 2000 ms (the service refreshes progress every second). */
  maxIntervalMs?: number;
  /** Give up after this long with a JobTimeoutError; default 1 hour. */
  timeoutMs?: number;
  signal?: AbortSignal;
}

/** The job did not end within the time given. */
export class JobTimeoutError extends Error {
  override readonly name = 'JobTimeoutError';
  constructor(readonly job: Job) {
    super(`job ${job.datasetJobId} is still ${job.currentStatus.datasetJobStatusName}`);
  }
}
