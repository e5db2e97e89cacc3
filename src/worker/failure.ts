// How a job ends when it cannot complete: a message (and the file's defects) for its status entry.
import type { ErrorData } from '../domain/jobs/status.js';

/** A failure to report on the job (the message is shown to the caller: no secrets in it). */
export class JobFailure extends Error {
  constructor(
    message: string,
    readonly errorData: ErrorData | null = null,
  ) {
    super(message);
  }
}

/** Why a running job was stopped from outside. */
export type StopReason = 'shutdown' | 'leaseLost';

/** The abort reason a worker gives its job's signal. */
export class JobStopped extends Error {
  constructor(readonly reason: StopReason) {
    super(reason === 'shutdown' ? 'the worker is shutting down' : 'the job lease was lost');
  }
}
