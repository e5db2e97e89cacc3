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

/** A role could not start (its port is taken, say); the roles already started were stopped. */
export class RoleStartError extends Error {
  constructor(role: string, address: string, cause: unknown) {
    const code = (cause as NodeJS.ErrnoException | null)?.code;
    const why =
      code === 'EADDRINUSE'
        ? `${address} is already in use (another \`dx serve\` running?); stop it, or choose another port`
        : code === 'EACCES'
          ? `${address} needs privileges this user lacks; choose a port above 1023`
          : cause instanceof Error
            ? cause.message
            : String(cause);
    super(`the ${role} could not listen: ${why}`, { cause });
  }
}

/** Starts the roles of `config` in this process; if one cannot start, stops the others and throws. */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const logger =
    options.logger === false ? createLogger('silent') : (options.logger ?? createLogger(config.logLevel));
  const database = await openDatabase(config.databaseUrl, options.database);
  let proxy: ProxyRole | null = null;
  let api: FastifyInstance | null = null;
  try {
    await migrateToLatest(database);
    const services = createServices(config, database, logger);
    // The proxy starts first so /metrics can include its workers' figures.
    if (config.roles.includes('proxy')) {
      const address = `${config.host}:${config.proxyPort} (PROXY_PORT)`;
      proxy = await runProxyRole(config, { database, logger: roleLogger(logger, 'proxy') }).catch(
        (err: unknown) => {
          throw new RoleStartError('proxy', address, err);
        },
      );
    }

    let apiUrl: string | null = null;
    if (config.roles.includes('api')) {
      api = await buildApp(config, services, {
        logger: roleLogger(logger, 'api'),
        ...(proxy !== null ? { extraMetrics: () => (proxy as ProxyRole).metrics() } : {}),
      });
      const address = await api.listen({ host: config.host, port: config.apiPort }).catch((err: unknown) => {
        throw new RoleStartError('API', `${config.host}:${config.apiPort} (API_PORT)`, err);
      });
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

    const started = { api, proxy };
    let closing: Promise<void> | null = null;
    const close = () =>
      (closing ??= (async () => {
        // The worker gets the grace period while the API and proxy stop accepting.
        await Promise.all([started.api?.close(), started.proxy?.close(), uploads?.close(), worker?.close()]);
        await database.close();
      })());
    return { database, services, api, apiUrl, logger, proxy, close };
  } catch (err) {
    // Nothing half-started stays up: a process serving the proxy but not the API would look alive.
    const half: { close(): Promise<unknown> }[] = [api, proxy].filter((r) => r !== null);
    await Promise.allSettled(half.map((r) => r.close()));
    await database.close();
    throw err;
  }
}
