// Builds the services of one process from its configuration and open database.
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config.js';
import { JobNotifier } from '../domain/jobs/notifier.js';
import type { Services } from '../domain/services.js';
import type { Database } from '../storage/db/database.js';
import { createObjectStore } from '../storage/objects/index.js';
import { createRecordStore } from '../storage/records/index.js';
import { resolveSigningSecret } from './signing-secret.js';

/** The object store, record store, signing secret, job notifier and metrics of this process. */
export function createServices(config: Config, database: Database): Services {
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  return {
    database,
    objects: createObjectStore(config),
    records: createRecordStore(database),
    signingSecret: resolveSigningSecret(config),
    notifier: new JobNotifier(),
    metrics,
  };
}
