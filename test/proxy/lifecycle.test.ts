// Graceful shutdown, and the proxy role run as node:cluster workers in its own process.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { AUTH, call, eventually, startStack } from './stack.js';

void describe('proxy lifecycle', () => {
  void it('close() lets an in-flight exchange finish, then refuses new connections', async () => {
    const s = await startStack();
    const url = s.proxy.url;
    const seen = s.upstream.requestsSeen;
    const inflight = call(`${url}/v4/slow?ms=300`, { headers: s.headers });
    // Close only once the exchange is under way upstream (a fixed sleep races on a loaded machine).
    await eventually(() => s.upstream.requestsSeen > seen);
    const closing = s.close();
    const r = await inflight;
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.body.toString()), { sleptMs: 300 });
    await closing;
    await assert.rejects(call(`${url}/v4/echoes`, { headers: s.headers }), /ECONNREFUSED/);
  });

  void it('runs on 2 cluster workers sharing the port, and stops on SIGTERM', async () => {
    const s = await startStack();
    const file = (s.database.engine as { file: string }).file;
    const script = fileURLToPath(new URL('../../bench/proxy-server.js', import.meta.url));
    const child = spawn(process.execPath, [script], {
      env: {
        ...process.env,
        ROLES: 'proxy',
        HOST: '127.0.0.1',
        PROXY_PORT: '0',
        PROXY_WORKERS: '2',
        UPSTREAM_URL: s.upstream.url,
        DATABASE_URL: `sqlite:${file}`,
        LOG_LEVEL: 'silent',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        let err = '';
        child.stderr.on('data', (c: Buffer) => {
          err += c.toString();
          const m = /ready (http:\/\/\S+)/.exec(err);
          if (m !== null) resolve(m[1] as string);
        });
        child.once('exit', (code) => reject(new Error(`exited ${code}: ${err}`)));
      });
      const statuses = await Promise.all(
        Array.from({ length: 20 }, () =>
          call(`${url}/v4/echoes`, { headers: { authorization: AUTH, 'x-proxyvid': s.id } }),
        ),
      );
      assert.deepEqual(
        statuses.map((r) => r.status),
        Array.from({ length: 20 }, () => 200),
      );
      const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      assert.equal(await exited, 0);
    } finally {
      if (child.exitCode === null) child.kill('SIGKILL');
      await s.close();
    }
  });
});
