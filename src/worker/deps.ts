// What the worker role is built from, shared by its loop, its job runner and its upload watcher.
import type { Config } from '../config.js';
import type { Services } from '../domain/services.js';

/** Structured log sink (pino-compatible subset). */
export interface WorkerLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** The services a worker uses, its configuration and its log. */
export interface WorkerDeps extends Pick<
  Services,
  'database' | 'objects' | 'records' | 'notifier' | 'signingSecret' | 'metrics'
> {
  config: Config;
  log: WorkerLog;
}
