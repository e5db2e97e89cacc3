// Wires the upload watcher into the worker role when the object store takes uploads directly
// (presigned PUTs): the service must look for their arrival itself.
import type { Config } from '../config.js';
import type { Services } from '../domain/services.js';
import { startUploadWatcher, type UploadWatcher } from '../worker/upload-watcher.js';
import type { WorkerLog } from '../worker/deps.js';

/** Starts the watcher for S3 with direct transfers, or returns null (the service queues on receipt). */
export function startUploadArrivals(
  config: Config,
  services: Services,
  log: WorkerLog,
): UploadWatcher | null {
  if (config.storage.kind !== 's3' || config.storage.s3.transfers !== 'direct') return null;
  return startUploadWatcher({
    db: services.database.db,
    objects: services.objects,
    notifier: services.notifier,
    log,
    pollMs: config.storage.s3.pollMs,
    maxBytes: config.uploadMaxBytes,
  });
}
