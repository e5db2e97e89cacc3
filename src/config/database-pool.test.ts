import { test } from 'node:test';
import assert from 'node:assert/strict';
import { connectionsPerProcess, longHeldConnections, PROXY_WORKER_POOL_SIZE } from './database-pool.js';

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
