// The deployment of the roles-apart test, as an operator runs it at scale: a fresh PostgreSQL
// database (reached directly, or through PgBouncer in transaction mode), a fresh bucket
// (test/support/s3-server.ts: the store of TEST_S3_ENDPOINT, else s3rver), `dx migrate`, then separate `dx serve` processes: one api, two
// workers and one proxy (in front of the development upstream). The app and the proxy ID are made
// with the CLI; everything else goes through HTTP.
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { signAppJwt } from '../../../src/domain/identity/app-jwt-signer.js';
import { startDevUpstream, type DevUpstream } from '../../support/dev-upstream.js';
import { callApi, type ApiResponse, type Json } from '../../support/fixture.js';
import { POSTGRES_URL } from '../../support/databases.js';
import { startS3, type TestS3 } from '../../support/s3-server.js';
import { BANNERS, DX_BIN, serve, type Served } from '../../support/served.js';

const run = promisify(execFile);

/** How the processes reach PostgreSQL. */
export type DatabaseRoute = 'postgres' | 'pgbouncer';

/** PgBouncer's URL (any database name; the test replaces it), from the environment. */
export const PGBOUNCER_URL = process.env.TEST_PGBOUNCER_URL ?? '';

/** Why the PgBouncer route cannot run here, or null; REQUIRE_PGBOUNCER=1 (CI) makes it a failure. */
export function pgbouncerProblem(): string | null {
  const problem =
    PGBOUNCER_URL === '' ? 'TEST_PGBOUNCER_URL is not set (scripts/pgbouncer.sh start DIR)' : null;
  if (problem !== null && process.env.REQUIRE_PGBOUNCER === '1')
    throw new Error(`REQUIRE_PGBOUNCER=1 but ${problem}`);
  return problem;
}

/** The same server URL with another database name. */
function withDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
}

/**
 * A fresh database, made and dropped over a direct connection. Through PgBouncer the processes
 * cannot be confined to a schema (it does not pass the `options` startup parameter on), so every
 * run gets a database of its own, whichever the route.
 */
async function freshDatabase(route: DatabaseRoute): Promise<{ url: string; drop(): Promise<void> }> {
  const name = `dx_e2e_${randomBytes(6).toString('hex')}`;
  const admin = async (statement: string) => {
    const client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    try {
      await client.query(statement);
    } finally {
      await client.end();
    }
  };
  await admin(`create database "${name}"`);
  return {
    url: withDatabase(route === 'pgbouncer' ? PGBOUNCER_URL : POSTGRES_URL, name),
    // FORCE: PgBouncer keeps idle server connections to it open.
    drop: () => admin(`drop database if exists "${name}" with (force)`),
  };
}

/** A free loopback port, so the API's PUBLIC_URL can be known before it starts. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** The outcome of a `dx` command. */
export interface DxResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The running deployment. */
export interface RolesApart {
  api: Served;
  workers: [Served, Served];
  proxy: Served;
  apiUrl: string;
  proxyUrl: string;
  upstream: DevUpstream;
  bucket: TestS3;
  /** A folder for the test's files. */
  dir: string;
  /** An access token of the onboarded app's own installation. */
  token: string;
  /** A proxy ID made with `dx proxy-ids create`. */
  proxyId: string;
  /** Every process's settings in common (DATABASE_URL, S3_*, …). */
  env: Record<string, string>;
  /** Runs `dx` against the deployment (its database, its API with the app's token). */
  dx(...args: string[]): Promise<DxResult>;
  /** Calls /api/v1 with the app's token. */
  call<T = Json>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>>;
  close(): Promise<void>;
}

/** Settings that keep the run short: quick polls, a 2-second lease, a small pool per process. */
const QUICK = {
  DATABASE_POOL_SIZE: '4',
  WORKER_CONCURRENCY: '2',
  EXPORT_DOWNLOADS_MAX: '2',
  WORKER_POLL_MS: '50',
  S3_POLL_MS: '100',
  JOB_LEASE_MS: '2000',
  SHUTDOWN_GRACE_MS: '3000',
  PROXY_ID_REFRESH_MS: '200',
};

/** Migrates a fresh database, onboards an app and a proxy ID, and starts the four processes. */
export async function startRolesApart(
  route: DatabaseRoute,
  transfers: 'service' | 'direct',
): Promise<RolesApart> {
  // What has been set up, undone last first by close() (or when a later step fails).
  const undo: (() => unknown)[] = [];
  const close = async () => {
    for (const step of undo.splice(0).reverse()) await step();
  };
  try {
    const dir = mkdtempSync(join(tmpdir(), 'dx-roles-apart-'));
    undo.push(() => rmSync(dir, { recursive: true, force: true }));
    const database = await freshDatabase(route);
    undo.push(() => database.drop());
    const bucket = await startS3();
    undo.push(() => bucket.close());
    const upstream = await startDevUpstream();
    undo.push(() => upstream.close());
    const apiPort = await freePort();
    const apiUrl = `http://127.0.0.1:${apiPort}`;
    const env: Record<string, string> = {
      ...bucket.env,
      ...QUICK,
      DATABASE_URL: database.url,
      SIGNING_SECRET: randomBytes(32).toString('base64url'),
      PUBLIC_URL: apiUrl,
      S3_TRANSFERS: transfers,
      LOAD_URL_ALLOWLIST: '127.0.0.1/32',
    };
    let token = '';
    const dx = async (...args: string[]): Promise<DxResult> => {
      try {
        const { stdout, stderr } = await run(process.execPath, [DX_BIN, ...args], {
          env: { ...process.env, ...env, DATA_DIR: dir, DX_API_URL: apiUrl, DX_ACCESS_TOKEN: token },
        });
        return { code: 0, stdout, stderr };
      } catch (err) {
        const e = err as { code: number; stdout: string; stderr: string };
        return { code: e.code, stdout: e.stdout, stderr: e.stderr };
      }
    };
    const ok = async (...args: string[]) => {
      const res = await dx(...args);
      if (res.code !== 0) throw new Error(`dx ${args.join(' ')}: exit ${res.code}: ${res.stderr}`);
      return res.stdout;
    };
    const start = (role: string, extra: Record<string, string> = {}) => {
      const s = serve(role, { env: { ...env, ...extra } });
      undo.push(async () => {
        // A process the test killed has exited already (stop() would wait for it forever).
        if (s.child.exitCode === null && s.child.signalCode === null) await s.stop();
        s.cleanup();
      });
      return s;
    };

    // As a deployment runs it: the migration first (a Job, an init step), then the roles, which
    // start while the operator onboards an app and a proxy client (the proxy finds a new proxy
    // ID by reloading its set on a miss).
    await ok('migrate');
    const api = start('api', { API_PORT: String(apiPort) });
    const workers: [Served, Served] = [start('worker'), start('worker')];
    const proxy = start('proxy', { UPSTREAM_URL: upstream.url });
    const keyFile = join(dir, 'app.pem');
    const [appJson, proxyJson, , proxyUrl] = await Promise.all([
      ok('apps', 'create', '--name', 'Roles apart', '--key-out', keyFile, '--json'),
      ok('proxy-ids', 'create', '--name', 'Dialer', '--json'),
      api.banner(BANNERS.api),
      proxy.banner(BANNERS.proxy),
      ...workers.map((w) => w.banner(BANNERS.admin)),
    ]);
    const app = JSON.parse(appJson) as {
      platformAppId: string;
      installationId: number;
      workspaceKey: string;
    };
    const proxyId = (JSON.parse(proxyJson) as { id: string }).id;
    // The app signs its JWT itself, as partners' code does (`dx token` does the same).
    const jwt = await signAppJwt({ appId: app.platformAppId, privateKeyPem: readFileSync(keyFile, 'utf8') });
    const minted = await callApi<{ token: string }>(apiUrl, jwt, 'POST', '/auth/clientToken', {
      tokenType: 'appInstallation',
      installationId: app.installationId,
      workspaceKey: app.workspaceKey,
      permissions: [],
    });
    if (minted.status !== 200) throw new Error(`clientToken: ${minted.status} ${minted.text}`);
    token = minted.json.token;
    return {
      api,
      workers,
      proxy,
      apiUrl,
      proxyUrl: proxyUrl ?? '',
      upstream,
      bucket,
      dir,
      token,
      proxyId,
      env,
      dx,
      call: (method, path, body) => callApi(apiUrl, token, method, path, body),
      close,
    };
  } catch (err) {
    await close();
    throw err;
  }
}
