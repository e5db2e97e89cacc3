// A load job's outcome as a typed result: polled with backoff until it reaches a final state.
import { sleep } from './http.js';
import { DxProblemError } from './problem.js';
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
  return Object.hasOwn(FINAL, job.currentStatus.status);
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
  const name = status.status as FinalJobStatus;
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
  /**
   * How long reads of the job go on while the service is unavailable (no connection, or 502, 503
   * or 504 from it or a gateway: a restart, a deployment), with backoff, before the last error is
   * thrown; default 0 (thrown at once). Reading a job changes nothing, so repeating it is safe.
   */
  unavailableMs?: number;
  /** Called with the error when the service first fails to answer in that way (once per outage). */
  onUnavailable?: (err: unknown) => void;
  signal?: AbortSignal;
}

/** The job did not end within the time given. */
export class JobTimeoutError extends Error {
  override readonly name = 'JobTimeoutError';
  constructor(readonly job: Job) {
    super(`job ${job.datasetJobId} is still ${job.currentStatus.status}`);
  }
}

/** First and longest waits between reads while the service is unavailable. */
const OUTAGE_FIRST_WAIT_MS = 250;
const OUTAGE_MAX_WAIT_MS = 5000;

/**
 * Whether `err` is what a service that is restarting gives: fetch's network failure (a TypeError
 * whose cause carries a system or undici error code) or a 502, 503 or 504.
 */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof DxProblemError) return err.status === 502 || err.status === 503 || err.status === 504;
  if (!(err instanceof TypeError)) return false;
  const code = (err.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string';
}

/** Runs `read`, again while the service is unavailable, for up to `options.unavailableMs`. */
export async function readThroughOutage<T>(
  read: () => Promise<T>,
  options: Pick<WaitOptions, 'unavailableMs' | 'onUnavailable' | 'signal'>,
): Promise<T> {
  const limit = options.unavailableMs ?? 0;
  let since: number | null = null;
  for (let wait = OUTAGE_FIRST_WAIT_MS; ; wait = Math.min(OUTAGE_MAX_WAIT_MS, wait * 2)) {
    try {
      return await read();
    } catch (err) {
      if (!isUnavailable(err)) throw err;
      const first = since === null;
      since ??= Date.now();
      if (Date.now() - since + wait > limit) throw err;
      if (first) options.onUnavailable?.(err);
      await sleep(wait, options.signal);
    }
  }
}
