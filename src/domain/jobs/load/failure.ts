// How a job ends when it cannot complete: a message (and the file's defects) for its status entry.
import type { ErrorData } from '../status.js';

/** A failure to report on the job (the message is shown to the caller: no secrets in it). */
export class JobFailure extends Error {
  constructor(
    message: string,
    readonly errorData: ErrorData | null = null,
  ) {
    super(message);
  }
}

/** The job's lease lapsed before its commit; the swap was rolled back and another worker runs it. */
export class LeaseLostOnCommit extends Error {
  constructor() {
    super('the job lease was lost before commit');
  }
}
