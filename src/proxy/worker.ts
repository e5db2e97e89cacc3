// Entry point of a proxy cluster worker (forked by startProxyWorkers; not meant to be run by hand).
import cluster from 'node:cluster';
import type { Config } from '../config.js';
import { PROXY_WORKER_POOL_SIZE } from '../config/database-pool.js';
import { openDatabase } from '../storage/db/database.js';
import { WORKER_CONFIG_ENV, type FromWorker, type ToWorker } from './cluster.js';
import { SqlProxyIdStore } from '../domain/identity/proxy-ids.js';
import { startProxy } from './server.js';
import { openRateStore } from './shared-rate-store.js';

async function main(): Promise<void> {
  const raw = process.env[WORKER_CONFIG_ENV];
  if (!cluster.isWorker || raw === undefined)
    throw new Error('the proxy worker runs under startProxyWorkers only');
  const config = JSON.parse(raw) as Config;
  // The primary already migrated; a worker reads proxy_ids and settles proxy_rate_buckets.
  const database = await openDatabase(config.databaseUrl, { maxConnections: PROXY_WORKER_POOL_SIZE });
  const rateStore = openRateStore(database);
  const proxy = await startProxy(config, {
    proxyIds: new SqlProxyIdStore(database.db),
    rateShare: 1 / config.proxy.workers,
    rateStore,
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void proxy
      .close()
      .then(() => rateStore.close())
      .then(() => database.close())
      .finally(() => process.exit(0));
  };
  process.on('message', (msg: ToWorker) => {
    switch (msg.type) {
      case 'dx-proxy:drain':
        proxy.drain();
        break;
      case 'dx-proxy:shutdown':
        stop();
        break;
      case 'dx-proxy:collect-metrics':
        send({ type: 'dx-proxy:metrics', requestId: msg.requestId, metrics: proxy.metrics.toJSON() });
        break;
      default: {
        // A new message fails to compile here until it is handled above.
        const unhandled: never = msg;
        return unhandled;
      }
    }
  });
  // The primary handles signals; a worker just ignores SIGINT and SIGHUP from the terminal's
  // process group (and ends with the primary, whose channel closes when it is gone).
  process.on('SIGINT', () => undefined);
  process.on('SIGHUP', () => undefined);
  // SIGTERM to every process of the group (systemd's default) or to this worker alone: the same
  // sequence as the primary's, so the shared port does not close before the delay is over.
  process.on('SIGTERM', () => {
    proxy.drain();
    setTimeout(stop, config.shutdownDelayMs);
  });
  send({ type: 'dx-proxy:ready', url: proxy.url });
}

function send(msg: FromWorker): void {
  process.send?.(msg);
}

main().catch((err: unknown) => {
  console.error('proxy worker failed to start:', err);
  process.exit(1);
});
