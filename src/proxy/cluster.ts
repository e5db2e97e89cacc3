// Running the proxy role: in the calling process (PROXY_WORKERS=1), or in N node:cluster workers
// sharing the proxy port, each with its own upstream pool, ID cache and rate-limit share.
import cluster, { type Worker } from 'node:cluster';
import { fileURLToPath } from 'node:url';
import type { Logger } from 'pino';
import { AggregatorRegistry, type Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { Database } from '../storage/db/database.js';
import { SqlProxyIdStore } from './proxy-ids.js';
import { startProxy } from './server.js';

/** Environment variable that carries the validated config to the workers (CLI flags included). */
export const WORKER_CONFIG_ENV = 'DX_PROXY_WORKER_CONFIG';

/** Messages between the primary and a proxy worker. */
export type WorkerMessage = { type: 'dx-proxy:ready'; url: string } | { type: 'dx-proxy:shutdown' };

/** The proxy role, however many processes serve it. */
export interface ProxyRole {
  /** The URL of the proxy port. */
  url: string;
  /**
   * Prometheus text to append to /metrics: the workers' metrics summed (cluster mode), or this
   * process's proxy metrics when no registry was shared; '' when they are already in the shared one.
   */
  metrics(): Promise<string>;
  close(): Promise<void>;
}

/** What `runProxyRole` needs besides the config. */
export interface ProxyRoleDeps {
  /** Open metadata database (used in-process; workers open their own). */
  database: Database;
  /** Registry shared with the API when the proxy runs in this process. */
  registry?: Registry;
  logger?: Logger;
}

/** Starts the proxy role as configured: in this process, or in `config.proxy.workers` workers. */
export async function runProxyRole(config: Config, deps: ProxyRoleDeps): Promise<ProxyRole> {
  if (config.proxy.workers <= 1) {
    const proxy = await startProxy(config, {
      proxyIds: new SqlProxyIdStore(deps.database.db),
      ...(deps.registry !== undefined ? { registry: deps.registry } : {}),
      ...(deps.logger !== undefined ? { logger: deps.logger } : {}),
    });
    const shared = deps.registry !== undefined;
    return {
      url: proxy.url,
      metrics: async () => (shared ? '' : proxy.registry.metrics()),
      close: () => proxy.close(),
    };
  }
  return startProxyWorkers(config, deps.logger);
}

/** Forks the workers from the primary; a worker that dies unexpectedly is replaced after a second. */
export async function startProxyWorkers(config: Config, logger?: Logger): Promise<ProxyRole> {
  if (!cluster.isPrimary) throw new Error('proxy workers are forked from the primary process only');
  cluster.setupPrimary({ exec: fileURLToPath(new URL('./worker.js', import.meta.url)), args: [] });
  const aggregator = new AggregatorRegistry();
  const workers = new Set<Worker>();
  let closing = false;

  const fork = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const worker = cluster.fork({ [WORKER_CONFIG_ENV]: JSON.stringify(config) });
      workers.add(worker);
      worker.on('message', (msg: WorkerMessage) => {
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
    metrics: () => aggregator.clusterMetrics(),
    close: async () => {
      closing = true;
      const exits = [...workers].map(
        (w) =>
          new Promise<void>((resolve) => {
            if (w.isDead()) return resolve();
            w.once('exit', () => resolve());
            w.send({ type: 'dx-proxy:shutdown' } satisfies WorkerMessage);
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
