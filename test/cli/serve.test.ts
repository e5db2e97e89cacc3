// `dx serve` as an operator runs it: starts on SQLite, answers, logs JSON without secrets, and stops
// on SIGTERM as a load balancer needs (not ready at once, serving on for SHUTDOWN_DELAY_MS, then
// closing with in-flight requests completed) or at once on a Ctrl-C.
import { it, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { get, request } from 'node:http';
import { onDatabase } from '../support/databases.js';
import { callApi, startFixture } from '../support/fixture.js';
import { portRefuses, within } from '../support/processes.js';
import { BANNERS, serve } from '../support/served.js';

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
      // Generous, as in served.ts: a cold start on a loaded machine has taken more than 20 s.
      const timer = setTimeout(() => reject(new Error(`no banner: ${stderr}`)), 60_000);
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

test('without SIGNING_SECRET and with nowhere to keep a generated one, serve names the setting and exits 1', async () => {
  const dbDir = mkdtempSync(join(tmpdir(), 'dx-serve-nosecret-'));
  try {
    // sysfs refuses new directories even to root, as a container's read-only file system does.
    const child = spawn(process.execPath, [BIN, 'serve', '--api-port', '0'], {
      env: {
        ...process.env,
        DATA_DIR: '/sys/dx-signing-secret-test',
        DATABASE_URL: `sqlite:${join(dbDir, 'dx.sqlite')}`,
        SIGNING_SECRET: '',
        HOST: '127.0.0.1',
        ROLES: 'api',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 1);
    assert.match(
      stderr,
      /SIGNING_SECRET: not set, and no secret can be kept in \/sys\/dx-signing-secret-test/,
    );
    assert.doesNotMatch(stderr, /API listening|\n\s+at /);
  } finally {
    rmSync(dbDir, { recursive: true, force: true });
  }
});

/** `METHOD url` on a connection of its own; the status, the Connection header and the body. */
function requestOnNewConnection(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; connection: string | undefined; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.once('end', () =>
        resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }),
      );
    }).once('error', reject);
  });
}

await onDatabase('sqlite', 'serve on SIGTERM', (target) => {
  it('/readyz answers 503 at once, the API serves on for SHUTDOWN_DELAY_MS, then the port closes, the upload in flight completes and the process exits 0', async () => {
    // The fixture (API only, in this process) onboards; the process under test shares its data.
    const h = await startFixture(target, { ROLES: 'api' });
    const served = serve('api,worker', {
      dataDir: h.processEnv.DATA_DIR,
      env: { ...h.processEnv, SHUTDOWN_DELAY_MS: '3000', SHUTDOWN_GRACE_MS: '20000' },
    });
    try {
      const url = await served.banner(BANNERS.api);
      const auth = { authorization: `Bearer ${h.token}` };
      const datasetId = await h.defineDataset([{ name: 'id', type: 'integer' }], ['id']);
      const answer = await callApi<{ url: string; jobId: string }>(
        url,
        h.token,
        'POST',
        `/datasets/${datasetId}/uploadUrl`,
        {
          contentType: 'csv',
        },
      );
      assert.equal(answer.status, 202, answer.text);
      // The signed URL names the public URL; the signature covers the path and query only.
      const signed = new URL(answer.json.url);
      const target = new URL(signed.pathname + signed.search, url);

      // An upload under way when the signal comes: half its body sent.
      const csv = `id\n${Array.from({ length: 2000 }, (_, i) => i + 1).join('\n')}\n`;
      const half = csv.length >> 1;
      const put = request(target, {
        method: 'PUT',
        agent: false,
        headers: { 'content-type': 'text/csv', 'content-length': String(Buffer.byteLength(csv)) },
      });
      const putAnswer = new Promise<{ status: number; body: string }>((resolve, reject) => {
        put.once('response', (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (chunk: string) => (body += chunk));
          res.once('end', () => resolve({ status: res.statusCode ?? 0, body }));
        });
        put.once('error', reject);
      });
      put.write(csv.slice(0, half));
      await new Promise((r) => setTimeout(r, 300));

      const signalledAt = Date.now();
      served.child.kill('SIGTERM');
      // Not ready at once, on the API's port (no ADMIN_PORT), and telling clients to move on ...
      let ready = await requestOnNewConnection(`${url}/readyz`);
      for (let i = 0; ready.status === 200 && i < 20; i++) {
        await new Promise((r) => setTimeout(r, 25));
        ready = await requestOnNewConnection(`${url}/readyz`);
      }
      assert.equal(ready.status, 503);
      assert.match(ready.body, /shutting down/);
      assert.equal(ready.connection, 'close');
      assert.ok(Date.now() - signalledAt < 2000, 'not ready within 2 s, while the delay is 3 s');
      // ... while the API goes on answering, on new connections too.
      const health = await requestOnNewConnection(`${url}/healthz`);
      assert.deepEqual([health.status, health.connection], [200, 'close']);
      const list = await requestOnNewConnection(`${url}/api/v1/datasets`, auth);
      assert.deepEqual([list.status, list.connection], [200, 'close']);

      // After the delay the listener closes.
      const port = Number(new URL(url).port);
      assert.ok(await within(10_000, () => portRefuses(port)), 'the port stayed open');
      const openMs = Date.now() - signalledAt;
      assert.ok(openMs >= 2500, `the port closed after ${openMs} ms, before the delay`);
      assert.equal(served.child.exitCode, null, 'exited with an upload in flight');

      // The upload in flight completes, then the process exits cleanly.
      put.end(csv.slice(half));
      const stored = await putAnswer;
      assert.equal(stored.status, 200, stored.body);
      assert.equal(JSON.parse(stored.body).bytes, Buffer.byteLength(csv));
      const [code] = (await once(served.child, 'exit')) as [number | null];
      assert.equal(code, 0, served.stderr());
      // Its worker had stopped claiming: the job waits for the next one.
      const job = await h.api<{ currentStatus: { datasetJobStatusName: string } }>(
        'GET',
        `/datasets/jobs/${answer.json.jobId}`,
      );
      assert.equal(job.json.currentStatus.datasetJobStatusName, 'Queued');
    } finally {
      served.cleanup();
      await h.close();
    }
  });
});

test('SIGINT (a Ctrl-C) stops at once, and one after SIGTERM cuts the delay short', async () => {
  for (const signals of [['SIGINT'], ['SIGTERM', 'SIGINT']] as const) {
    const served = serve('api', { env: { SHUTDOWN_DELAY_MS: '60000' } });
    try {
      const url = await served.banner(BANNERS.api);
      const started = Date.now();
      for (const signal of signals) {
        served.child.kill(signal);
        if (signal === 'SIGTERM')
          assert.ok(await within(5000, async () => (await fetch(`${url}/readyz`)).status === 503));
      }
      const [code] = (await once(served.child, 'exit')) as [number | null];
      assert.equal(code, 0, served.stderr());
      assert.ok(Date.now() - started < 10_000, `${signals.join(', ')}: took ${Date.now() - started} ms`);
    } finally {
      served.cleanup();
    }
  }
});
