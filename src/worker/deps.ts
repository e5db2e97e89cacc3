// What the worker role is built from, shared by its loop, its job runner and its upload watcher.
import type { Config } from '../config.js';
import type { Database } from '../storage/db/database.js';
import type { ObjectStore } from '../storage/objects/index.js';
import type { RecordStore } from '../storage/records/index.js';
import type { JobNotifier } from './notifier.js';

/** Structured log sink (pino-compatible subset). */
export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

export interface WorkerDeps {
  config: Config;
  database: Database;
  objects: ObjectStore;
  records: RecordStore;
  notifier: JobNotifier;
  log: WorkerLog;
}
