// How a job ends when it cannot complete: a message (and the file's defects) for its status entry.
import type { ErrorData, LogData } from '../status.js';

/** A failure to report on the job (the message is shown to the caller: no secrets in it). */
export class JobFailure extends Error {
  constructor(
    message: string,
    readonly errorData: ErrorData | null = null,
    /** Counts for the status entry (records read and rejected). */
    readonly counts: Omit<LogData, 'message'> = {},
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

/** The dataset's records changed (another load committed) after the job copied them to build on
 * (append, upsert): the swap was rolled back, and the job goes back to the queue to run again on
 * the new records. Loads of one dataset are claimed one at a time, so this is a rare race. */
export class DatasetChangedMeanwhile extends Error {
  constructor() {
    super('another load of the dataset committed while this job ran');
  }
}
