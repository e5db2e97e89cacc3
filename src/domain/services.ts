// The services of one process: built once by the composition root (runtime/services.ts) and
// handed to every role it runs, so the API, the worker and the proxy share one of each.
import type { Registry } from 'prom-client';
import type { Database } from '../storage/db/database.js';
import type { ObjectStore } from '../storage/objects/index.js';
import type { RecordStore } from '../storage/records/index.js';
import type { JobNotifier } from './jobs/notifier.js';

export interface Services {
  /** Metadata (identity, datasets, jobs) and, in the same database, the record tables. */
  database: Database;
  /** Uploaded files and exports. */
  objects: ObjectStore;
  /** The datasets' record tables. */
  records: RecordStore;
  /** HMAC key of the service's own signed URLs. */
  signingSecret: string;
  /** Wakes this process's worker as soon as a job is queued. */
  notifier: JobNotifier;
  /** Prometheus registry shared by every role of the process. */
  metrics: Registry;
}
