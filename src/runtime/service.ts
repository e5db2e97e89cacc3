// The composition root: opens the database, builds each role the configuration asks for, and
// shuts them down in order (stop accepting, finish in-flight work, close the database).
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { buildApp } from '../http/app.js';
import { createLogger, roleLogger, type Logger } from '../lib/logger.js';
import { openDatabase, type Database, type OpenOptions } from '../storage/db/database.js';
import { migrateToLatest } from '../storage/db/migrate.js';
import { startWorker, type Worker } from '../worker/worker.js';
import { createServices } from './services.js';
import type { Services } from '../domain/services.js';
import { runProxyRole, type ProxyRole } from '../proxy/cluster.js';
import { startUploadArrivals } from './upload-arrivals.js';
import type { UploadWatcher } from '../worker/upload-watcher.js';

/** A running service; `close()` shuts every role down gracefully. */
export interface RunningService {
  database: Database;
  /** The stores, secret, notifier and metrics every role of this process shares. */
  services: Services;
  api: FastifyInstance | null;
  proxy: ProxyRole | null;
  /** The API's base URL as bound (useful with port 0). */
  apiUrl: string | null;
  /** The process's logger; each role logs through a child of it. */
  logger: Logger;
  close(): Promise<void>;
}

export interface StartOptions {
  /** The process's logger; default: a new one at LOG_LEVEL; `false` silences every role (tests). */
  logger?: Logger | false;
  /** How to open the database (tests confine PostgreSQL to a schema). */
  database?: OpenOptions;
}

/** Starts the roles of `config` in this process. */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const logger =
    options.logger === false ? createLogger('silent') : (options.logger ?? createLogger(config.logLevel));
  const database = await openDatabase(config.databaseUrl, options.database);
  await migrateToLatest(database);
  const services = createServices(config, database);
  // The proxy starts first so /metrics can include its workers' figures.
  const proxy = config.roles.includes('proxy')
    ? await runProxyRole(config, { database, logger: roleLogger(logger, 'proxy') })
    : null;

  let api: FastifyInstance | null = null;
  let apiUrl: string | null = null;
  if (config.roles.includes('api')) {
    api = await buildApp(config, services, {
      logger: roleLogger(logger, 'api'),
      ...(proxy !== null ? { extraMetrics: () => proxy.metrics() } : {}),
    });
    const address = await api.listen({ host: config.host, port: config.apiPort });
    apiUrl = address.replace('0.0.0.0', 'localhost').replace('[::]', 'localhost');
  }

  let worker: Worker | null = null;
  let uploads: UploadWatcher | null = null;
  if (config.roles.includes('worker')) {
    const log = roleLogger(logger, 'worker');
    worker = startWorker({ config, ...services, log });
    uploads = startUploadArrivals(config, services, log);
    log.info({ concurrency: config.workerConcurrency }, 'worker started');
  }

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // The worker gets the grace period while the API and proxy stop accepting.
      await Promise.all([api?.close(), proxy?.close(), uploads?.close(), worker?.close()]);
      await database.close();
    })());
  return { database, services, api, apiUrl, logger, proxy, close };
}
