import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  connectionsPerProcess,
  longHeldConnections,
  poolSizeProblem,
  PROXY_WORKER_POOL_SIZE,
} from './database-pool.js';

const base = { databasePoolSize: 10, workerConcurrency: 2, exportDownloadsMax: 4, proxy: { workers: 1 } };

test('a process opens its pool, and a proxy cluster one more pool per forked worker', () => {
  assert.equal(connectionsPerProcess({ ...base, roles: ['api'] }), 10);
  assert.equal(connectionsPerProcess({ ...base, roles: ['worker'] }), 10);
  assert.equal(connectionsPerProcess({ ...base, roles: ['proxy'] }), 10);
  assert.equal(
    connectionsPerProcess({ ...base, roles: ['proxy'], proxy: { workers: 4 } }),
    10 + 4 * PROXY_WORKER_POOL_SIZE,
  );
  // PROXY_WORKERS counts only where the proxy runs.
  assert.equal(connectionsPerProcess({ ...base, roles: ['api', 'worker'], proxy: { workers: 4 } }), 10);
});

test('connections held for minutes: a COPY per running load, one per export download', () => {
  assert.equal(longHeldConnections({ ...base, roles: ['worker'] }), 2);
  assert.equal(longHeldConnections({ ...base, roles: ['api'] }), 4);
  assert.equal(longHeldConnections({ ...base, roles: ['api', 'worker', 'proxy'] }), 6);
  assert.equal(longHeldConnections({ ...base, roles: ['proxy'] }), 0);
});

test('a pool no larger than the connections held for minutes is refused, naming what holds them', () => {
  assert.equal(poolSizeProblem({ ...base, roles: ['worker'], databasePoolSize: 3 }), null);
  // A worker running two loads holds two connections for their COPYs: a pool of two leaves none
  // for its heartbeats.
  assert.equal(
    poolSizeProblem({ ...base, roles: ['worker'], databasePoolSize: 2 }),
    'DATABASE_POOL_SIZE: 2 leaves no connection for other queries while WORKER_CONCURRENCY loads (2) each hold one; set it to at least 3',
  );
  assert.match(
    poolSizeProblem({ ...base, roles: ['api', 'worker'], databasePoolSize: 6 }) ?? '',
    /WORKER_CONCURRENCY loads \(2\) and EXPORT_DOWNLOADS_MAX downloads \(4\) each hold one; set it to at least 7$/,
  );
  assert.equal(poolSizeProblem({ ...base, roles: ['api', 'worker'], databasePoolSize: 7 }), null);
  assert.equal(poolSizeProblem({ ...base, roles: ['proxy'], databasePoolSize: 1 }), null);
});
