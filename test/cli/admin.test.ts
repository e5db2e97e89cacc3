// Every role observable: `dx serve` processes of any roles answer /healthz, /readyz and /metrics on
// their admin address, are not ready while draining or without their database, and request ids
// and trace context travel from a client through the proxy into the upstream and the logs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { once } from 'node:events';
import { createServer as createHttpServer, get, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTcpServer, connect, type AddressInfo, type Socket } from 'node:net';
import { promisify } from 'node:util';
import pg from 'pg';
import { POSTGRES_URL, dropPostgresSchema, postgresUrlIn } from '../support/databases.js';
import { portRefuses } from '../support/processes.js';
import { BANNERS, DX_BIN, serve, type Served } from '../support/served.js';

const AUTH = `Basic ${Buffer.from('testApp:s3cr3t-api-key|1').toString('base64')}`;
const TRACEPARENT = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
const TRACESTATE = 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7';

const { admin: ADMIN, proxy: PROXY, api: API } = BANNERS;

/** An upstream that records each request's headers; `hold` keeps answers back until released. */
async function recordingUpstream(): Promise<{
  url: string;
  seen: IncomingHttpHeaders[];
  hold: boolean;
  release(): void;
  close(): Promise<void>;
}> {
  const held: (() => void)[] = [];
  const state = {
    url: '',
    seen: [] as IncomingHttpHeaders[],
    hold: false,
    release: () => held.splice(0).forEach((f) => f()),
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const server: Server = createHttpServer((req, res) => {
    state.seen.push(req.headers);
    const answer = () => res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
    if (state.hold) held.push(answer);
    else answer();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

/** Creates a proxy ID through the CLI, as an operator does. */
async function createProxyId(dataDir: string): Promise<string> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [DX_BIN, 'proxy-ids', 'create', '--name', 'admin test', '--json'],
    { env: { ...process.env, DATA_DIR: dataDir } },
  );
  return (JSON.parse(stdout) as { id: string }).id;
}

/** A GET on a connection of its own (so that cluster workers share the requests). */
function getOnNewConnection(
  url: string,
  headers: Record<string, string>,
): Promise<{ status: number; headers: IncomingHttpHeaders }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, headers }, (res) => {
      res.resume();
      res.once('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
    }).once('error', reject);
  });
}

async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15000,
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

test('a worker-only process serves /healthz, /readyz and /metrics on its admin port', async () => {
  const worker = serve('worker', { args: ['--admin-port', '0'] });
  try {
    const admin = await worker.banner(ADMIN);
    const health = await fetch(`${admin}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    const ready = await fetch(`${admin}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(await ready.json(), { status: 'ready' });
    const metrics = await fetch(`${admin}/metrics`);
    assert.equal(metrics.status, 200);
    assert.match(metrics.headers.get('content-type') ?? '', /^text\/plain/);
    assert.match(await metrics.text(), /^process_cpu_user_seconds_total \d/m);
    // Only the three routes, read-only, and every refusal a problem.
    const missing = await fetch(`${admin}/api/v1/datasets`);
    assert.equal(missing.status, 404);
    assert.equal(missing.headers.get('content-type'), 'application/problem+json');
    assert.equal(((await missing.json()) as { status: number }).status, 404);
    const post = await fetch(`${admin}/metrics`, { method: 'POST' });
    assert.equal(post.status, 405);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    await post.arrayBuffer();
    assert.equal(await worker.stop(), 0);
    // Probes are not logged: an operator's log is not flooded by the orchestrator.
    assert.ok(!worker.lines().some((l) => JSON.stringify(l).includes('/healthz')));
  } finally {
    worker.cleanup();
  }
});

test('a proxy-only process with two cluster workers: whole metrics on the admin port, request ids to the upstream and the access log', async () => {
  const upstream = await recordingUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-admin-proxy-'));
  const id = await createProxyId(dataDir);
  const proxy = serve('proxy', {
    env: { ADMIN_PORT: '0', PROXY_WORKERS: '2', UPSTREAM_URL: upstream.url },
    dataDir,
  });
  try {
    const proxyUrl = await proxy.banner(PROXY);
    const admin = await proxy.banner(ADMIN);
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        getOnNewConnection(`${proxyUrl}/v4/echoes`, {
          authorization: AUTH,
          'x-proxyvid': id,
          'x-request-id': `client-req-${i}`,
          traceparent: TRACEPARENT,
          tracestate: TRACESTATE,
        }),
      ),
    );
    assert.deepEqual(
      answers.map((a) => [a.status, a.headers['x-request-id']]),
      Array.from({ length: 10 }, (_, i) => [200, `client-req-${i}`]),
    );
    // The upstream got each id once, and the trace context unchanged.
    assert.deepEqual(
      upstream.seen.map((h) => h['x-request-id']).sort(),
      Array.from({ length: 10 }, (_, i) => `client-req-${i}`).sort(),
    );
    for (const h of upstream.seen) {
      assert.equal(h.traceparent, TRACEPARENT);
      assert.equal(h.tracestate, TRACESTATE);
      assert.equal(h['x-proxyvid'], undefined);
    }
    const text = await (await fetch(`${admin}/metrics`)).text();
    const prefix = id.slice(0, 11);
    assert.match(
      text,
      new RegExp(
        `^dx_proxy_requests_total\\{proxy_id="${prefix}",method="GET",status_class="2xx"\\} 10$`,
        'm',
      ),
    );
    assert.match(text, /^process_cpu_user_seconds_total \d/m);
    assert.equal(await proxy.stop(), 0);
    const access = proxy.lines().filter((l) => l.msg === 'proxy request');
    assert.equal(new Set(access.map((l) => l.pid)).size, 2, 'both workers served requests');
    assert.deepEqual(
      access.map((l) => l.reqId).sort(),
      Array.from({ length: 10 }, (_, i) => `client-req-${i}`).sort(),
    );
  } finally {
    proxy.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
    await upstream.close();
  }
});

test('/readyz answers 503 while the process drains on SIGTERM, /healthz stays 200', async () => {
  const upstream = await recordingUpstream();
  upstream.hold = true;
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-admin-drain-'));
  const id = await createProxyId(dataDir);
  const proxy = serve('proxy', {
    env: { ADMIN_PORT: '0', UPSTREAM_URL: upstream.url, SHUTDOWN_GRACE_MS: '20000' },
    dataDir,
  });
  try {
    const proxyUrl = await proxy.banner(PROXY);
    const admin = await proxy.banner(ADMIN);
    assert.equal((await fetch(`${admin}/readyz`)).status, 200);
    const inflight = getOnNewConnection(`${proxyUrl}/v4/slow`, { authorization: AUTH, 'x-proxyvid': id });
    await until(() => upstream.seen.length === 1, 'the request upstream');
    const exited = once(proxy.child, 'exit') as Promise<[number | null]>;
    proxy.child.kill('SIGTERM');
    let ready: Response | undefined;
    await until(async () => {
      ready = await fetch(`${admin}/readyz`);
      return ready.status !== 200;
    }, '/readyz to turn 503');
    assert.equal(ready?.status, 503);
    const body = (await ready?.json()) as { status: number; detail: string };
    assert.equal(body.status, 503);
    assert.match(body.detail, /shutting down/);
    assert.equal((await fetch(`${admin}/healthz`)).status, 200);
    // The exchange in flight still completes, then the process exits cleanly.
    upstream.release();
    assert.equal((await inflight).status, 200);
    const [code] = await exited;
    assert.equal(code, 0, proxy.stderr());
  } finally {
    proxy.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
    await upstream.close();
  }
});

test('SIGTERM to a proxy: /readyz 503 at once, the proxy forwards for SHUTDOWN_DELAY_MS with Connection: close, then closes after the exchange in flight', async () => {
  const upstream = await recordingUpstream();
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-admin-delay-'));
  const id = await createProxyId(dataDir);
  const proxy = serve('proxy', {
    env: {
      ADMIN_PORT: '0',
      UPSTREAM_URL: upstream.url,
      SHUTDOWN_DELAY_MS: '2000',
      SHUTDOWN_GRACE_MS: '20000',
    },
    dataDir,
  });
  const headers = { authorization: AUTH, 'x-proxyvid': id };
  try {
    const proxyUrl = await proxy.banner(PROXY);
    const admin = await proxy.banner(ADMIN);
    upstream.hold = true;
    const inflight = getOnNewConnection(`${proxyUrl}/v4/slow`, headers);
    await until(() => upstream.seen.length === 1, 'the request upstream');
    upstream.hold = false;
    const exited = once(proxy.child, 'exit') as Promise<[number | null]>;
    const signalledAt = Date.now();
    proxy.child.kill('SIGTERM');
    await until(async () => (await fetch(`${admin}/readyz`)).status === 503, '/readyz to turn 503', 1500);
    // The proxy still takes new connections and forwards, telling keep-alive clients to move on.
    const during = await getOnNewConnection(`${proxyUrl}/v4/echoes`, headers);
    assert.equal(during.status, 200);
    assert.equal(during.headers.connection, 'close');
    const proxyPort = Number(new URL(proxyUrl).port);
    await until(() => portRefuses(proxyPort), 'the proxy port to close');
    assert.ok(Date.now() - signalledAt >= 1500, `closed after ${Date.now() - signalledAt} ms`);
    // The admin port answers (not ready) while the exchange in flight holds the process.
    assert.equal((await fetch(`${admin}/readyz`)).status, 503);
    upstream.release();
    assert.equal((await inflight).status, 200);
    const [code] = await exited;
    assert.equal(code, 0, proxy.stderr());
    assert.ok(await portRefuses(Number(new URL(admin).port)), 'the admin port stayed open');
  } finally {
    proxy.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
    await upstream.close();
  }
});

test('with an admin port of its own, /metrics is served there and not on the public API port', async () => {
  const api = serve('api', { env: { ADMIN_PORT: '0' } });
  try {
    const apiUrl = await api.banner(API);
    const admin = await api.banner(ADMIN);
    assert.notEqual(new URL(admin).port, new URL(apiUrl).port);
    const hidden = await fetch(`${apiUrl}/metrics`);
    assert.equal(hidden.status, 404);
    await hidden.arrayBuffer();
    // The load balancer's probes stay on the public port.
    assert.equal((await fetch(`${apiUrl}/healthz`)).status, 200);
    assert.equal((await fetch(`${apiUrl}/readyz`)).status, 200);
    const text = await (await fetch(`${admin}/metrics`)).text();
    assert.match(text, /^dx_api_requests_total\{/m);
    assert.equal(await api.stop(), 0);
  } finally {
    api.cleanup();
  }
});

test('an admin port already taken stops the whole process with one clear message', async () => {
  const busy = createTcpServer();
  busy.listen(0, '127.0.0.1');
  await once(busy, 'listening');
  const { port } = busy.address() as AddressInfo;
  const worker = serve('worker', { env: { ADMIN_PORT: String(port) } });
  try {
    const [code] = (await once(worker.child, 'exit')) as [number | null];
    assert.equal(code, 1);
    assert.match(
      worker.stderr(),
      new RegExp(
        `the admin server could not listen: 127\\.0\\.0\\.1:${port} \\(ADMIN_PORT\\) is already in use`,
      ),
    );
    assert.doesNotMatch(worker.stderr(), /Dataset Exchange Service: roles/);
  } finally {
    busy.close();
    worker.cleanup();
  }
});

/** A TCP relay to PostgreSQL that the test can cut, as a network partition would. */
async function cuttableRelay(
  target: URL,
): Promise<{ port: number; cut(): Promise<void>; restore(): Promise<void>; close(): void }> {
  const sockets = new Set<Socket>();
  const server = createTcpServer((client) => {
    const upstream = connect(Number(target.port || 5432), target.hostname);
    sockets.add(client).add(upstream);
    client.pipe(upstream).pipe(client);
    const drop = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    port,
    restore: async () => {
      server.listen(port, '127.0.0.1');
      await once(server, 'listening');
    },
    cut: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
    close: () => {
      server.close();
      for (const s of sockets) s.destroy();
    },
  };
}

test('/readyz answers 503 while the database is unreachable (PostgreSQL)', async (t) => {
  const admin = new pg.Client({ connectionString: POSTGRES_URL });
  try {
    await admin.connect();
  } catch {
    t.skip('PostgreSQL is not reachable');
    return;
  }
  const schema = `admin_readyz_${process.pid}`;
  await admin.query(`create schema if not exists "${schema}"`);
  await admin.end();
  const relay = await cuttableRelay(new URL(POSTGRES_URL));
  const url = new URL(postgresUrlIn(schema));
  url.host = `127.0.0.1:${relay.port}`;
  const worker = serve('worker', {
    env: { ADMIN_PORT: '0', DATABASE_URL: url.toString(), WORKER_POLL_MS: '60000' },
  });
  try {
    const adminUrl = await worker.banner(ADMIN);
    assert.equal((await fetch(`${adminUrl}/readyz`)).status, 200);
    await relay.cut();
    const ready = await fetch(`${adminUrl}/readyz`).catch((err: unknown) => {
      throw new Error(`no answer (${String(err)}): ${worker.stderr()}`);
    });
    assert.equal(ready.status, 503);
    assert.match(((await ready.json()) as { detail: string }).detail, /database does not answer/);
    assert.equal((await fetch(`${adminUrl}/healthz`)).status, 200);
    // The database back: the same process is ready again (it did not crash meanwhile).
    await relay.restore();
    await until(async () => (await fetch(`${adminUrl}/readyz`)).status === 200, '/readyz to recover');
    assert.equal(worker.child.exitCode, null);
  } finally {
    worker.cleanup();
    relay.close();
    await dropPostgresSchema(schema);
  }
});

test("request ids and traceparent pass through the proxy into the API's log lines", async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-admin-trace-'));
  const id = await createProxyId(dataDir);
  const api = serve('api', { dataDir });
  let proxy: Served | undefined;
  try {
    const apiUrl = await api.banner(API);
    proxy = serve('proxy', { env: { ADMIN_PORT: '0', UPSTREAM_URL: apiUrl }, dataDir });
    const proxyUrl = await proxy.banner(PROXY);
    const headers = { authorization: AUTH, 'x-proxyvid': id };
    // Any visible ASCII up to 200 characters is kept, quotes and slashes included.
    const given = `order "7"/${'x'.repeat(180)}`.replace(' ', '_');
    const kept = await getOnNewConnection(`${proxyUrl}/api/v1/datasets`, {
      ...headers,
      'x-request-id': given,
      traceparent: TRACEPARENT,
      tracestate: TRACESTATE,
    });
    assert.equal(kept.status, 401);
    assert.equal(kept.headers['x-request-id'], given);
    // Not safe (a space, or too long): replaced by the proxy's own id, which the API keeps.
    const replaced = await getOnNewConnection(`${proxyUrl}/api/v1/datasets`, {
      ...headers,
      'x-request-id': 'has space',
      traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
    });
    const made = replaced.headers['x-request-id'] as string;
    assert.ok(made !== undefined && made !== 'has space');
    const long = await getOnNewConnection(`${proxyUrl}/api/v1/datasets`, {
      ...headers,
      'x-request-id': 'y'.repeat(201),
    });
    assert.notEqual(long.headers['x-request-id'], 'y'.repeat(201));

    assert.equal(await proxy.stop(), 0);
    assert.equal(await api.stop(), 0);
    const apiLines = api.lines().filter((l) => l.msg === 'api request');
    const first = apiLines.find((l) => l.reqId === given);
    assert.ok(first !== undefined, `no API line with the request id: ${JSON.stringify(apiLines)}`);
    assert.equal(first.traceparent, TRACEPARENT);
    assert.equal(first.tracestate, TRACESTATE);
    const second = apiLines.find((l) => l.reqId === made);
    assert.ok(second !== undefined, 'the API logs the id the proxy made');
    // An all-zero trace id is not a valid traceparent: passed on, but not logged.
    assert.equal(second.traceparent, undefined);
    const access = proxy.lines().filter((l) => l.msg === 'proxy request');
    assert.deepEqual(
      access.map((l) => l.reqId),
      [given, made, long.headers['x-request-id']],
    );
  } finally {
    proxy?.cleanup();
    api.cleanup();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
