// DATABASE_POOL_SIZE as an operator meets it: `dx serve` refuses a pool its own loads would fill,
// says the figures it opens PostgreSQL with, and a CLI command in the same environment still runs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { onDatabase } from '../support/databases.js';
import { DX_BIN, serve } from '../support/served.js';

const run = promisify(execFile);

test('dx serve refuses a pool that its loads would fill, before reaching the database', async () => {
  // Nothing listens on port 1: the refusal must come from the configuration, not a connection.
  const worker = serve('worker', {
    env: {
      DATABASE_URL: 'postgres://dx@127.0.0.1:1/dx',
      WORKER_CONCURRENCY: '2',
      DATABASE_POOL_SIZE: '2',
    },
  });
  try {
    const [code] = await new Promise<[number | null]>((resolve) =>
      worker.child.once('exit', (c) => resolve([c])),
    );
    assert.equal(code, 1);
    assert.match(
      worker.stderr(),
      /DATABASE_POOL_SIZE: 2 leaves no connection for other queries while WORKER_CONCURRENCY loads \(2\) each hold one; set it to at least 3/,
    );
  } finally {
    worker.cleanup();
  }
});

await onDatabase('postgres', 'DATABASE_POOL_SIZE', (target) => {
  void test('each process logs its pool and the most connections it opens; the CLI runs beside it', async () => {
    const isolated = await target.create();
    const env = { DATABASE_URL: isolated.processUrl, DATABASE_POOL_SIZE: '3', WORKER_CONCURRENCY: '2' };
    const worker = serve('worker', { env });
    const proxy = serve('proxy', { env: { ...env, UPSTREAM_URL: 'http://127.0.0.1:9', PROXY_WORKERS: '2' } });
    try {
      await Promise.all([worker.banner(/Admin listening/), proxy.banner(/Proxy listening/)]);
      const pool = (s: typeof worker) => s.lines().find((l) => l.msg === 'PostgreSQL pool opened');
      assert.deepEqual(
        { poolSize: pool(worker)?.poolSize, connectionsAtMost: pool(worker)?.connectionsAtMost },
        { poolSize: 3, connectionsAtMost: 3 },
      );
      // Each of the two proxy processes forked by the primary has a pool of one.
      assert.deepEqual(
        { poolSize: pool(proxy)?.poolSize, connectionsAtMost: pool(proxy)?.connectionsAtMost },
        { poolSize: 3, connectionsAtMost: 5 },
      );
      // A pool of three is too small for an API process (four downloads), not for a command.
      const { stdout } = await run(process.execPath, [DX_BIN, 'migrate', '--json'], {
        env: { ...process.env, ...env, DATA_DIR: worker.dataDir },
      });
      assert.deepEqual(JSON.parse(stdout), { applied: [] });
      assert.equal(await worker.stop(), 0);
      assert.equal(await proxy.stop(), 0);
    } finally {
      worker.cleanup();
      proxy.cleanup();
      await isolated.dispose();
    }
  });
});
