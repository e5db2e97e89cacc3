// What the loading, job and record routes need beyond ApiDeps.
import type { ObjectStore } from '../storage/objects/index.js';
import type { RecordStore } from '../storage/records/index.js';
import type { JobNotifier } from '../worker/notifier.js';

export interface LoadingDeps {
  objects: ObjectStore;
  records: RecordStore;
  /** HMAC key of the service's own signed URLs. */
  signingSecret: string;
  /** Wakes an in-process worker when a job is queued. */
  notifier: JobNotifier;
}
