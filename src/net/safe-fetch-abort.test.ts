// An abort that lands before the caller reads the body must reach the reader, not crash the process.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { safeFetch } from './safe-fetch.js';

test('an abort before reading is kept for the reader (no uncaught error)', async () => {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/csv' });
    res.write('a\n1\n');
    // Never ends on its own: the abort is what stops it.
  }).listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const uncaught: unknown[] = [];
  const onUncaught = (err: unknown) => uncaught.push(err);
  process.on('uncaughtException', onUncaught);
  try {
    const controller = new AbortController();
    const { port } = server.address() as AddressInfo;
    const fetched = await safeFetch(`http://127.0.0.1:${port}/x.csv`, {
      allowlist: ['127.0.0.1/32'],
      maxBytes: 1024,
      signal: controller.signal,
    });
    const reason = new Error('stopped for shutdown');
    controller.abort(reason);
    await new Promise((r) => setTimeout(r, 100));
    assert.deepEqual(uncaught, []);
    await assert.rejects(
      (async () => {
        for await (const _chunk of fetched.body) {
          /* drain */
        }
      })(),
    );
  } finally {
    process.off('uncaughtException', onUncaught);
    server.closeAllConnections();
    server.close();
  }
});
