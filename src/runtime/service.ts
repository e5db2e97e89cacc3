// The composition root: opens the database, builds each role the configuration asks for, and
// shuts them down in order (stop accepting, finish in-flight work, close the database).
import type { FastifyInstance } from 'fastify';
import { collectDefaultMetrics, Registry } from 'prom-client';
import type { Config } from '../config.js';
import { buildApp } from '../http/app.js';
import { createLogger, roleLogger, type Logger } from '../lib/logger.js';
import { openDatabase, type Database, type OpenOptions } from '../storage/db/database.js';
import { migrateToLatest } from '../storage/db/migrate.js';
import { startWorker, type Worker } from '../worker/worker.js';
import { createLoadingDeps, datasetCleanup, loadingRouteGroups } from './loading.js';
import { runProxyRole, type ProxyRole } from '../proxy/cluster.js';
import { startUploadArrivals } from './upload-arrivals.js';
import type { UploadWatcher } from '../worker/upload-watcher.js';

/** A running service; `close()` shuts every role down gracefully. */
export interface RunningService {
  database: Database;
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
  const metrics = new Registry();
  collectDefaultMetrics({ register: metrics });
  // The proxy starts first so /metrics can include its workers' figures.
  const proxy = config.roles.includes('proxy')
    ? await runProxyRole(config, { database, logger: roleLogger(logger, 'proxy') })
    : null;
  const loading = createLoadingDeps(config, database);
  const deps = {
    config,
    database,
    db: database.db,
    metrics,
    onDatasetDeleted: datasetCleanup(database, loading),
    ...(proxy !== null ? { extraMetrics: () => proxy.metrics() } : {}),
  };

  let api: FastifyInstance | null = null;
  let apiUrl: string | null = null;
  if (config.roles.includes('api')) {
    api = await buildApp(deps, {
      logger: roleLogger(logger, 'api'),
      ...loadingRouteGroups(loading),
    });
    const address = await api.listen({ host: config.host, port: config.apiPort });
    apiUrl = address.replace('0.0.0.0', 'localhost').replace('[::]', 'localhost');
  }

  let worker: Worker | null = null;
  let uploads: UploadWatcher | null = null;
  if (config.roles.includes('worker')) {
    const log = roleLogger(logger, 'worker');
    worker = startWorker({ config, database, ...loading, log });
    uploads = startUploadArrivals(config, database, loading, log);
    log.info({ concurrency: config.workerConcurrency }, 'worker started');
  }

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // The worker gets the grace period while the API and proxy stop accepting.
      await Promise.all([api?.close(), proxy?.close(), uploads?.close(), worker?.close()]);
      await database.close();
    })());
  return { database, api, apiUrl, logger, proxy, close };
}
