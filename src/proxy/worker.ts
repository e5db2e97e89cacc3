// Entry point of a proxy cluster worker (forked by startProxyWorkers; not meant to be run by hand).
import cluster from 'node:cluster';
import { AggregatorRegistry, Registry } from 'prom-client';
import type { Config } from '../config.js';
import { openDatabase } from '../storage/db/database.js';
import { WORKER_CONFIG_ENV, type WorkerMessage } from './cluster.js';
import { SqlProxyIdStore } from './proxy-ids.js';
import { startProxy } from './server.js';

async function main(): Promise<void> {
  const raw = process.env[WORKER_CONFIG_ENV];
  if (!cluster.isWorker || raw === undefined)
    throw new Error('the proxy worker runs under startProxyWorkers only');
  const config = JSON.parse(raw) as Config;
  // The primary already migrated; a worker only reads proxy_ids.
  const database = await openDatabase(config.databaseUrl, { maxConnections: 2 });
  const registry = new Registry();
  // The primary's AggregatorRegistry asks each worker for its registries over IPC.
  new AggregatorRegistry();
  AggregatorRegistry.setRegistries([registry]);
  const proxy = await startProxy(config, {
    proxyIds: new SqlProxyIdStore(database.db),
    registry,
    rateShare: 1 / config.proxy.workers,
  });
  let stopping = false;
  const stop = () => {
    if (stopping) return;
    stopping = true;
    void proxy
      .close()
      .then(() => database.close())
      .finally(() => process.exit(0));
  };
  process.on('message', (msg: WorkerMessage) => {
    if (msg.type === 'dx-proxy:shutdown') stop();
  });
  // The primary handles signals; a worker just ignores SIGINT from the terminal's process group.
  process.on('SIGINT', () => undefined);
  process.on('SIGTERM', stop);
  process.send?.({ type: 'dx-proxy:ready', url: proxy.url } satisfies WorkerMessage);
}

main().catch((err: unknown) => {
  console.error('proxy worker failed to start:', err);
  process.exit(1);
});
