// `dx serve` as an operator runs it: starts on SQLite, answers, logs JSON without secrets, stops on SIGTERM.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

const BIN = join(process.cwd(), 'bin', 'dx.js');

test('serve starts, answers, keeps secrets out of its logs and exits cleanly on SIGTERM', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-serve-'));
  const child = spawn(process.execPath, [BIN, 'serve', '--api-port', '0'], {
    env: { ...process.env, DATA_DIR: dataDir, HOST: '127.0.0.1', LOG_LEVEL: 'info', ROLES: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no banner: ${stderr}`)), 20000);
      child.stderr.on('data', () => {
        const m = /API listening on (http:\/\/\S+)\/api\/v1/.exec(stderr);
        if (m?.[1] !== undefined) {
          clearTimeout(timer);
          resolve(m[1]);
        }
      });
    });
    assert.match(stderr, /Onboard a first app/);
    const health = await fetch(`${url}/healthz`);
    assert.equal(health.status, 200);
    const secret = 'dxt_supersecretvalue';
    const res = await fetch(`${url}/api/v1/datasets?sig=topsecretsignature`, {
      headers: { authorization: `Bearer ${secret}`, 'x-request-id': 'req-42' },
    });
    assert.equal(res.status, 401);
    assert.equal(res.headers.get('x-request-id'), 'req-42');

    child.kill('SIGTERM');
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0);
    const lines = stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.ok(
      lines.some((l) => l.reqId === 'req-42'),
      'the request id is logged',
    );
    assert.ok(!stdout.includes(secret), 'the bearer token is not logged');
    assert.ok(!stdout.includes('topsecretsignature'), 'query values are not logged');
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('a port already taken stops the whole process with one clear message, the proxy included', async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-serve-busy-'));
  const busy = createServer();
  busy.listen(0, '127.0.0.1');
  await once(busy, 'listening');
  const { port } = busy.address() as AddressInfo;
  try {
    const child = spawn(process.execPath, [BIN, 'serve', '--api-port', String(port), '--proxy-port', '0'], {
      env: {
        ...process.env,
        DATA_DIR: dataDir,
        HOST: '127.0.0.1',
        ROLES: 'api,proxy',
        UPSTREAM_URL: 'http://127.0.0.1:9',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    // The proxy started first; the process must not stay up with it alone.
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1);
    assert.match(
      stderr,
      new RegExp(`the API could not listen: 127\\.0\\.0\\.1:${port} \\(API_PORT\\) is already in use`),
    );
    assert.doesNotMatch(stderr, /API listening/);
  } finally {
    busy.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
