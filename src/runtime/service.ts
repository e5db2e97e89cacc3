// The composition root: opens the database, builds each role the configuration asks for, and
// shuts them down in order (not ready, serve on for a delay, stop accepting, finish in-flight work,
// close the database).
import type { FastifyInstance } from 'fastify';
import { ConfigError, DEFAULT_ADMIN_PORT, type Config } from '../config.js';
import { connectionsPerProcess, poolSizeProblem } from '../config/database-pool.js';
import { startAdminServer, type AdminServer } from '../http/admin-server.js';
import { buildApp } from '../http/app.js';
import { createLogger, roleLogger, type Logger } from '../lib/logger.js';
import { openDatabase, type Database, type OpenOptions } from '../storage/db/database.js';
import { migrateToLatest } from '../storage/db/migrate.js';
import { startWorker, type Worker } from '../worker/worker.js';
import { ABANDONED_PUT_MS } from '../worker/sweep.js';
import { listeningUrl } from '../lib/listening-url.js';
import { createServices } from './services.js';
import { listenForJobWakeups, type JobWakeupListener } from '../storage/db/job-wakeups.js';
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
  /** Where /healthz, /readyz and /metrics are served: the API's URL, or the admin port's. */
  adminUrl: string;
  /** The process's logger; each role logs through a child of it. */
  logger: Logger;
  /**
   * Shuts every role down: /readyz answers 503 at once and workers stop claiming; the listeners
   * go on serving for `delayMs` (answering `Connection: close`), then close, and in-flight
   * requests, exchanges and jobs get SHUTDOWN_GRACE_MS. A second call without a delay ends the
   * delay under way.
   */
  close(options?: CloseOptions): Promise<void>;
}

export interface CloseOptions {
  /** How long the listeners go on serving before they close (SHUTDOWN_DELAY_MS on SIGTERM); default 0. */
  delayMs?: number;
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

/** Where this process serves its probes: on the API's port, or on a listener of their own. */
export function adminPlacement(config: Config): { onApi: true } | { onApi: false; port: number } {
  const { port } = config.admin;
  const api = config.roles.includes('api');
  // ADMIN_PORT equal to a fixed API_PORT means the same listener; 0 always asks for a port of its own.
  if (api && (port === null || (port === config.apiPort && port !== 0))) return { onApi: true };
  return { onApi: false, port: port ?? DEFAULT_ADMIN_PORT };
}

/** Starts the roles of `config` in this process; if one cannot start, stops the others and throws. */
export async function startService(config: Config, options: StartOptions = {}): Promise<RunningService> {
  const logger =
    options.logger === false ? createLogger('silent') : (options.logger ?? createLogger(config.logLevel));
  const poolSize = options.database?.maxConnections ?? config.databasePoolSize;
  // Checked here, where the roles are known: a CLI command in the same environment needs one connection.
  const poolProblem = config.databaseUrl.startsWith('sqlite:')
    ? null
    : poolSizeProblem({ ...config, databasePoolSize: poolSize });
  if (poolProblem !== null) throw new ConfigError([poolProblem]);
  const database = await openDatabase(config.databaseUrl, { ...options.database, maxConnections: poolSize });
  if (database.engine.kind === 'postgres') {
    // The figures an operator sums against max_connections (deploy/README.md).
    const connectionsAtMost = connectionsPerProcess({ ...config, databasePoolSize: poolSize });
    logger.info({ poolSize, connectionsAtMost }, 'PostgreSQL pool opened');
  }
  let proxy: ProxyRole | null = null;
  let api: FastifyInstance | null = null;
  let admin: AdminServer | null = null;
  // Set by close(): /readyz answers 503 from the first moment of the shutdown until the process exits.
  let draining = false;
  const probes = { draining: () => draining };
  const placement = adminPlacement(config);
  try {
    await migrateToLatest(database);
    const services = await createServices(config, database, logger);
    // The roles that write objects sweep what a killed process of theirs left at once, before they
    // serve: waiting for a worker's next sweep would leave it to an API-only process's neighbours.
    if (config.roles.includes('api') || config.roles.includes('worker')) {
      await removeAbandonedPuts(services, logger);
    }
    // The proxy starts first so /metrics can include its workers' figures.
    if (config.roles.includes('proxy')) {
      const address = `${config.host}:${config.proxyPort} (PROXY_PORT)`;
      proxy = await runProxyRole(config, { database, logger: roleLogger(logger, 'proxy') }).catch(
        (err: unknown) => {
          throw new RoleStartError('proxy', address, err);
        },
      );
    }
    // The primary's figures: in a proxy cluster, the sum over every worker.
    const role = proxy;
    const extraMetrics = role !== null ? { extraMetrics: () => role.metrics() } : {};

    let apiUrl: string | null = null;
    if (config.roles.includes('api')) {
      api = await buildApp(config, services.forRole('api'), {
        logger: roleLogger(logger, 'api'),
        ...extraMetrics,
        ...probes,
        metricsOnAdminPort: !placement.onApi,
      });
      await api.listen({ host: config.host, port: config.apiPort }).catch((err: unknown) => {
        throw new RoleStartError('API', `${config.host}:${config.apiPort} (API_PORT)`, err);
      });
      apiUrl = listeningUrl(api.server);
    }

    let adminUrl = apiUrl as string;
    if (!placement.onApi) {
      const { host } = config.admin;
      admin = await startAdminServer(host, placement.port, {
        database,
        metrics: services.metrics,
        ...extraMetrics,
        ...probes,
        logger,
      }).catch((err: unknown) => {
        throw new RoleStartError('admin server', `${host}:${placement.port} (ADMIN_PORT)`, err);
      });
      adminUrl = admin.url;
    }

    let worker: Worker | null = null;
    let uploads: UploadWatcher | null = null;
    let wakeups: JobWakeupListener | null = null;
    if (config.roles.includes('worker')) {
      const log = roleLogger(logger, 'worker');
      const workerServices = services.forRole('worker');
      worker = startWorker({ config, ...workerServices, log });
      uploads = startUploadArrivals(config, workerServices, log);
      const { notifier } = services;
      wakeups = listenForJobWakeups(
        database,
        () => notifier.wakeLocal(),
        (err) => log.warn({ err }, 'job wake-ups from other processes lost; polling meanwhile'),
      );
      log.info({ concurrency: config.workerConcurrency }, 'worker started');
    }

    const started = { api, proxy, admin };
    // Without a listener that load balancers send traffic to, there is nobody to wait for.
    const serving = api !== null || proxy !== null;
    let closing: Promise<void> | null = null;
    let endDelay: (() => void) | null = null;
    const close = (options: CloseOptions = {}): Promise<void> => {
      const delayMs = serving ? (options.delayMs ?? 0) : 0;
      if (closing !== null) {
        if (delayMs === 0) endDelay?.();
        return closing;
      }
      closing = (async () => {
        draining = true;
        worker?.drain();
        const uploadsClosed = uploads?.close();
        started.proxy?.drain();
        if (delayMs > 0) {
          logger.info({ delayMs }, 'not ready; the listeners close after the delay');
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, delayMs);
            endDelay = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
        logger.info({ graceMs: config.shutdownGraceMs }, 'listeners closing; in-flight work may finish');
        await Promise.all([
          started.api !== null ? closeApi(started.api, config.shutdownGraceMs) : undefined,
          started.proxy?.close(),
          uploadsClosed,
          worker?.close(),
          wakeups?.close(),
        ]);
        // The admin port answers (not ready) until the roles have stopped.
        await started.admin?.close();
        await database.close();
      })();
      return closing;
    };
    return { database, services, api, apiUrl, adminUrl, logger, proxy, close };
  } catch (err) {
    // Nothing half-started stays up: a process serving the proxy but not the API would look alive.
    const half: { close(): Promise<unknown> }[] = [api, proxy, admin].filter((r) => r !== null);
    await Promise.allSettled(half.map((r) => r.close()));
    await database.close();
    throw err;
  }
}

/** Closes the API's listener; connections whose requests outlast `graceMs` are cut. */
async function closeApi(api: FastifyInstance, graceMs: number): Promise<void> {
  // Fastify answers requests on connections still open 503 with `Connection: close` meanwhile.
  const timer = setTimeout(() => api.server.closeAllConnections(), graceMs);
  try {
    await api.close();
  } finally {
    clearTimeout(timer);
  }
}

/** Removes the partial objects of puts whose process is gone (or that stalled); a store that cannot
 * be reached now is only logged: the workers' sweep tries again. */
async function removeAbandonedPuts(services: Services, logger: Logger): Promise<void> {
  try {
    const removed = await services.objects.removeAbandonedPuts(Date.now() - ABANDONED_PUT_MS);
    if (removed > 0) logger.info({ removed }, 'partial uploads left by a stopped process removed');
  } catch (err) {
    logger.warn({ err }, 'partial uploads left by a stopped process could not be swept; the worker retries');
  }
}
