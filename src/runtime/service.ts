// The composition root: opens the database, builds each role the configuration asks for, and
// shuts them down in order (stop accepting, finish in-flight work, close the database).
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.js';
import { buildApp, type BuildOptions } from '../http/app.js';
import { openDatabase, type Database, type OpenOptions } from '../storage/db/database.js';
import { migrateToLatest } from '../storage/db/migrate.js';
import { consoleLog } from '../worker/console-log.js';
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
  close(): Promise<void>;
}

export interface StartOptions {
  logger?: BuildOptions['logger'];
  /** How to open the database (tests confine PostgreSQL to a schema). */
  database?: OpenOptions;
}

/** Starts the roles of `config` in this process. */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const database = await openDatabase(config.databaseUrl, options.database);
  await migrateToLatest(database);
  const services = createServices(config, database);
  // The proxy starts first so /metrics can include its workers' figures.
  const proxy = config.roles.includes('proxy')
    ? await runProxyRole(config, { database, registry: services.metrics })
    : null;

  let api: FastifyInstance | null = null;
  let apiUrl: string | null = null;
  if (config.roles.includes('api')) {
    api = await buildApp(config, services, {
      ...(options.logger !== undefined ? { logger: options.logger } : {}),
      ...(proxy !== null ? { extraMetrics: () => proxy.metrics() } : {}),
    });
    const address = await api.listen({ host: config.host, port: config.apiPort });
    apiUrl = address.replace('0.0.0.0', 'localhost').replace('[::]', 'localhost');
  }

  let worker: Worker | null = null;
  let uploads: UploadWatcher | null = null;
  if (config.roles.includes('worker')) {
    const log = api?.log ?? consoleLog(config.logLevel);
    worker = startWorker({ config, ...services, log });
    uploads = startUploadArrivals(config, services, log);
  }

  let closing: Promise<void> | null = null;
  const close = () =>
    (closing ??= (async () => {
      // The worker gets the grace period while the API and proxy stop accepting.
      await Promise.all([api?.close(), proxy?.close(), uploads?.close(), worker?.close()]);
      await database.close();
    })());
  return { database, services, api, apiUrl, proxy, close };
}
