// Builds the services of one process from its configuration and open database.
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config, Role } from '../config.js';
import { JobNotifier } from '../domain/jobs/notifier.js';
import type { Services } from '../domain/services.js';
import type { Database } from '../storage/db/database.js';
import { createObjectStore } from '../storage/objects/index.js';
import { createRecordStore } from '../storage/records/index.js';
import { resolveSigningSecret } from './signing-secret.js';
import { JobObserverPlugin } from '../domain/jobs/lifecycle.js';
import type { Logger } from '../lib/logger.js';
import { jobSignals } from './job-signals.js';
import { publishJobWakeup } from '../storage/db/job-wakeups.js';

/** The services of a process, and of each role it runs. */
export interface ProcessServices extends Services {
  /** The same services, whose job moves are logged with `role`'s name (the roles share the rest). */
  forRole(role: Role): Services;
}

/** The object store, record store, signing secret, job notifier and metrics of this process. Every
 * job move made through `services.database` is logged (through `logger`) and counted; the metrics
 * registered are those of the roles `config` names. */
export async function createServices(
  config: Config,
  database: Database,
  logger: Logger | null = null,
): Promise<ProcessServices> {
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  const { roles } = config;
  const observerFor = jobSignals(metrics, logger, database.db, {
    events: roles.includes('api') || roles.includes('worker'),
    gauges: roles.includes('worker'),
  });
  const shared = {
    objects: await createObjectStore(config),
    records: createRecordStore(database),
    signingSecret: resolveSigningSecret(config),
    // On PostgreSQL a queued job also wakes the workers of other processes (NOTIFY).
    notifier: new JobNotifier(() => publishJobWakeup(database)),
    metrics,
  };
  // The same handle and pool, carrying the job observer (domain/jobs/lifecycle.ts); each handle
  // is made from the plain one, so a move is told to one observer only.
  const observed = (role: Role | null): Database => ({
    ...database,
    db: database.db.withPlugin(new JobObserverPlugin(observerFor(role))),
  });
  return {
    ...shared,
    database: observed(null),
    forRole: (role) => ({ ...shared, database: observed(role) }),
  };
}
