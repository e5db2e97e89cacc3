// Builds the services of one process from its configuration and open database.
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config.js';
import { JobNotifier } from '../domain/jobs/notifier.js';
import type { Services } from '../domain/services.js';
import type { Database } from '../storage/db/database.js';
import { createObjectStore } from '../storage/objects/index.js';
import { createRecordStore } from '../storage/records/index.js';
import { resolveSigningSecret } from './signing-secret.js';
import { JobObserverPlugin } from '../domain/jobs/lifecycle.js';
import type { Logger } from '../lib/logger.js';
import { jobSignals } from './job-signals.js';

/** The object store, record store, signing secret, job notifier and metrics of this process. Every
 * job move made through `services.database` is logged (through `logger`) and counted. */
export function createServices(config: Config, database: Database, logger: Logger | null = null): Services {
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const observer = jobSignals(metrics, logger, database.db);
  return {
    // The same handle and pool, carrying the job observer (domain/jobs/lifecycle.ts).
    database: { ...database, db: database.db.withPlugin(new JobObserverPlugin(observer)) },
    objects: createObjectStore(config),
    records: createRecordStore(database),
    signingSecret: resolveSigningSecret(config),
    notifier: new JobNotifier(),
    metrics,
  };
}
