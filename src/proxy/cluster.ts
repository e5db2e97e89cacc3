// Running the proxy role: in the calling process (PROXY_WORKERS=1), or in N node:cluster workers
// sharing the proxy port, each with its own upstream pool, ID cache and rate-limit share.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Config } from '../config.js';
import type { Logger } from '../lib/logger.js';
import type { Database } from '../storage/db/database.js';
import { proxyRegistry, type MetricJson } from './metrics.js';
import { SqlProxyIdStore } from '../domain/identity/proxy-ids.js';
import { startProxy } from './server.js';
import { openRateStore } from './shared-rate-store.js';

/** Environment variable that carries the validated config to the workers (CLI flags included). */
export const WORKER_CONFIG_ENV = 'DX_PROXY_WORKER_CONFIG';

/** Messages from the primary to a proxy worker. */
export type ToWorker =
  | { type: 'dx-proxy:drain' }
  | { type: 'dx-proxy:shutdown' }
  | { type: 'dx-proxy:collect-metrics'; requestId: number };

/** Messages from a proxy worker to the primary. */
export type FromWorker =
  | { type: 'dx-proxy:ready'; url: string }
  | { type: 'dx-proxy:metrics'; requestId: number; metrics: MetricJson[] };

/** How long the primary waits for a worker's metrics before /metrics fails. */
const METRICS_TIMEOUT_MS = 5000;

/** The proxy role, however many processes serve it. */
export interface ProxyRole {
  /** The URL of the proxy port. */
  url: string;
  /** Prometheus text of the proxy's metrics: this process's, or every worker's summed. */
  metrics(): Promise<string>;
  /** Goes on serving, answering with `Connection: close` (the delay before close()). */
  drain(): void;
  close(): Promise<void>;
}

/** What `runProxyRole` needs besides the config. */
export interface ProxyRoleDeps {
  /** Open metadata database (used in-process; workers open their own). */
  database: Database;
  logger?: Logger;
}

/** Starts the proxy role as configured: in this process, or in `config.proxy.workers` workers. */
export async function runProxyRole(config: Config, deps: ProxyRoleDeps): Promise<ProxyRole> {
  if (config.proxy.workers <= 1) {
    const rateStore = openRateStore(deps.database);
    const proxy = await startProxy(config, {
      proxyIds: new SqlProxyIdStore(deps.database.db),
      rateStore,
      ...(deps.logger !== undefined ? { logger: deps.logger } : {}),
    }).catch((err: unknown) => {
      rateStore.close();
      throw err;
    });
    return {
      url: proxy.url,
      metrics: () => proxyRegistry([proxy.metrics.toJSON()]).metrics(),
      drain: () => proxy.drain(),
      close: () => proxy.close().finally(() => rateStore.close()),
    };
  }
  return startProxyWorkers(config, deps.logger);
}

/** Forks the workers from the primary; a worker that dies unexpectedly is replaced after a second. */
export async function startProxyWorkers(config: Config, logger?: Logger): Promise<ProxyRole> {
  if (!cluster.isPrimary) throw new Error('proxy workers are forked from the primary process only');
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./worker.js', import.meta.url)), args: [] });
  const workers = new Set<Worker>();
  let closing = false;

  const fork = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork({ [WORKER_CONFIG_ENV]: JSON.stringify(config) });
      workers.add(worker);
      worker.on('message', (msg: FromWorker) => {
        if (msg.type === 'dx-proxy:ready') resolve(msg.url);
      });
      worker.once('exit', (code, signal) => {
        workers.delete(worker);
        reject(new Error(`proxy worker exited before it was ready (code ${code}, signal ${signal})`));
        if (closing) return;
        logger?.error({ code, signal }, 'proxy worker died; starting another');
        setTimeout(() => void fork().catch(() => undefined), 1000).unref();
      });
    });

  let urls: string[];
  try {
    urls = await Promise.all(Array.from({ length: config.proxy.workers }, fork));
  } catch (err) {
    closing = true;
    for (const w of workers) w.kill();
    throw err;
  }

  return {
    url: urls[0] as string,
    metrics: async () => {
      const requestId = nextMetricsRequest++;
      const live = [...workers].filter((w) => w.isConnected());
      return proxyRegistry(await Promise.all(live.map((w) => workerMetrics(w, requestId)))).metrics();
    },
    drain: () => {
      // A worker that ends from now on is not replaced.
      closing = true;
      for (const w of workers) if (w.isConnected()) w.send({ type: 'dx-proxy:drain' } satisfies ToWorker);
    },
    close: async () => {
      closing = true;
      const exits = [...workers].map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.send({ type: 'dx-proxy:shutdown' } satisfies ToWorker);
          }),
      );
      // Workers finish in-flight requests within the grace period; past it they are killed.
      const timer = setTimeout(() => {
        for (const w of workers) w.kill('SIGKILL');
      }, config.shutdownGraceMs + 2000);
      await Promise.all(exits);
      clearTimeout(timer);
    },
  };
}

let nextMetricsRequest = 0;

/** Asks one worker for its proxy metrics; a worker that exits meanwhile has none to add. */
function workerMetrics(worker: Worker, requestId: number): Promise<MetricJson[]> {
  return new Promise((resolve, reject) => {
    const settle = (outcome: () => void) => {
      clearTimeout(timer);
      worker.off('message', onMessage);
      worker.off('exit', onExit);
      outcome();
    };
    const onMessage = (msg: FromWorker) => {
      if (msg.type === 'dx-proxy:metrics' && msg.requestId === requestId) settle(() => resolve(msg.metrics));
    };
    const onExit = () => settle(() => resolve([]));
    const timer = setTimeout(
      () => settle(() => reject(new Error(`a proxy worker sent no metrics within ${METRICS_TIMEOUT_MS} ms`))),
      METRICS_TIMEOUT_MS,
    );
    worker.on('message', onMessage);
    worker.once('exit', onExit);
    worker.send({ type: 'dx-proxy:collect-metrics', requestId } satisfies ToWorker);
  });
}
