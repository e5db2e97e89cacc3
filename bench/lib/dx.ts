// The service under test: an environment (a fresh SQLite file or PostgreSQL schema, a data folder,
// one app onboarded) and `dx serve` processes on it, each in its own process (so its RSS and CPU
// are its own), with the calls the parts make to the API. startDx() is the usual case: one
// `--role api,worker` process; the api and jobs parts start roles apart on one environment.
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { request } from 'undici';
import { mintAccessToken, tokenMinting } from '../../src/domain/identity/access-tokens.js';
import { CredentialCache } from '../../src/domain/identity/credential-cache.js';
import { signAppJwt } from '../../src/domain/identity/app-jwt-signer.js';
import { createApp } from '../../src/domain/identity/apps.js';
import { openDatabase } from '../../src/storage/db/database.js';
import { migrateToLatest } from '../../src/storage/db/migrate.js';
import { freePort } from './net.js';
import type { BenchContext } from './part.js';
import { DATASET_SCHEMA, type FileFormat } from './records.js';
import { run, spawnServer, stop } from './spawn.js';

export type Engine = 'sqlite' | 'postgres';
export const ENGINE_NAMES: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };
/** The engines the parts measure: BENCH_ENGINES (e.g. `postgres`), both by default. */
export const ENGINES: readonly Engine[] = enginesOf(process.env.BENCH_ENGINES ?? 'sqlite,postgres');

function enginesOf(list: string): Engine[] {
  const names = list.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !(name in ENGINE_NAMES));
  if (unknown.length > 0) throw new Error(`BENCH_ENGINES: unknown engine(s) ${unknown.join(', ')}`);
  return names as Engine[];
}

/** The PostgreSQL database of the service and the psql baseline; each service gets its own schema. */
/**
 * The Node.js flags the service is started with in production (package.json's start, the image's
 * ENTRYPOINT; test/deploy checks they agree), so the suite measures the process operators run.
 */
export const SERVICE_NODE_FLAGS = ['--max-semi-space-size=16'];

export const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** What a client of the onboarded app holds. */
export interface AppCredentials {
  /** An access token of the app's installation (a day long). */
  token: string;
  /** An app JWT (an hour long: the longest the service accepts). */
  jwt: string;
  /** The body of POST /auth/clientToken for the installation. */
  mintBody: string;
}

/** A fresh database (SQLite file or PostgreSQL schema) and data folder with one app onboarded. */
export interface DxEnv {
  engine: Engine;
  dataDir: string;
  /** The service's DATABASE_URL. */
  databaseUrl: string;
  /** The PostgreSQL schema holding this service's tables (null on SQLite). */
  schema: string | null;
  /** The SQLite file of the service (null on PostgreSQL). */
  sqliteFile: string | null;
  /** application_name of every connection the environment's processes open (PGAPPNAME). */
  pgTag: string;
  /** For cpuWhile: the backends of this environment's service (null on SQLite). */
  pg: { url: string; tag: string } | null;
  credentials: AppCredentials;
  /** Runs SQL (one statement on PostgreSQL) on the service's database with the engine's
   * command-line tool; returns its output. */
  sql(statements: string): Promise<string>;
  /** Removes the data folder and drops the schema. */
  cleanup(): Promise<void>;
}

/** Makes a fresh environment on `engine` under the run's scratch folder. */
export async function createEnv(ctx: BenchContext, engine: Engine): Promise<DxEnv> {
  const id = randomBytes(4).toString('hex');
  const dataDir = join(ctx.tmp, `dx-${engine}-${id}`);
  const schema = engine === 'postgres' ? `bench_${id}` : null;
  const sqliteFile = schema === null ? join(dataDir, 'dx.sqlite') : null;
  const databaseUrl =
    sqliteFile !== null
      ? `sqlite:${sqliteFile}`
      : `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const cleanup = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (schema !== null) await dropSchema(schema);
  };
  try {
    mkdirSync(dataDir);
    const credentials = await onboard(sqliteFile !== null ? databaseUrl : PG_URL, schema);
    const pgTag = `dx-bench-${id}`;
    return {
      engine,
      dataDir,
      databaseUrl,
      schema,
      sqliteFile,
      pgTag,
      pg: schema === null ? null : { url: PG_URL, tag: pgTag },
      credentials,
      sql: (statements) =>
        sqliteFile !== null
          ? run('sqlite3', ['-cmd', '.timeout 10000', sqliteFile, statements])
          : // Each -c is its own transaction, so `statements` may be a VACUUM.
            run('psql', [PG_URL, '-Atq', '-c', `set search_path = "${schema}"`, '-c', statements]),
      cleanup,
    };
  } catch (err) {
    // The first error is the one to report; a failing cleanup (no database at all) must not hide it.
    await cleanup().catch(() => undefined);
    throw err;
  }
}

/** A running `dx serve` process of an environment. */
export interface DxProcess {
  pid: number;
  /** The API's base URL (…/api/v1 is under it), or the admin listener's for a worker alone. */
  url: string;
  /** Where its stdout (the service's log lines) goes. */
  logFile: string;
  /** Sends a signal (SIGSTOP and SIGCONT hold a process and let it go on). */
  signal(name: NodeJS.Signals): void;
  close(): Promise<void>;
}

/** What `--role` a process gets. */
export type Roles = 'api,worker' | 'api' | 'worker';

/** Starts `dx serve --role <roles>` on `env`; `settings` are more of its environment variables. */
export async function spawnDx(
  ctx: BenchContext,
  env: DxEnv,
  roles: Roles,
  settings: Record<string, string> = {},
): Promise<DxProcess> {
  const api = roles !== 'worker';
  const port = api ? await freePort() : 0;
  const logFile = join(
    env.dataDir,
    `service-${roles.replace(',', '-')}-${randomBytes(2).toString('hex')}.log`,
  );
  const service = await spawnServer(
    process.execPath,
    [...SERVICE_NODE_FLAGS, join(ctx.dist, '..', 'bin/dx.js'), 'serve', '--role', roles],
    {
      ready: api ? /API listening on (http:\/\/\S+)\/api\/v1/ : /Admin listening on (http:\/\/[^\s:]+:\d+)/,
      stdoutFile: logFile,
      env: {
        HOST: '127.0.0.1',
        API_PORT: String(port),
        // A worker alone serves /healthz on a port of its own; 0: any free one.
        ...(api ? {} : { ADMIN_PORT: '0' }),
        // Upload and download links are built on it.
        PUBLIC_URL: `http://127.0.0.1:${port}`,
        DATA_DIR: env.dataDir,
        DATABASE_URL: env.databaseUrl,
        PGAPPNAME: env.pgTag,
        LOG_LEVEL: 'warn',
        ...settings,
      },
    },
  );
  return {
    pid: service.child.pid as number,
    url: service.url,
    logFile,
    signal: (name) => void service.child.kill(name),
    close: async () => {
      // A held process must run again to hear the SIGTERM.
      service.child.kill('SIGCONT');
      await stop(service.child);
    },
  };
}

/** Calls to the API at `url` with the app's access token. */
export interface DxClient {
  url: string;
  /** An API call (path under /api/v1); the answer's text, or throws on non-2xx. */
  text(method: HttpMethod, path: string, body?: unknown, bearer?: string): Promise<string>;
  call<T>(method: HttpMethod, path: string, body?: unknown, bearer?: string): Promise<T>;
}

/** The methods the bench calls the API with. */
type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** A client of the API at `url` (a process's URL) calling with `token` unless told otherwise. */
export function dxClient(url: string, token: string): DxClient {
  const text = async (method: HttpMethod, path: string, body?: unknown, bearer = token) => {
    const res = await request(`${url}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${bearer}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const answer = await res.body.text();
    if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${answer}`);
    return answer;
  };
  return {
    url,
    text,
    call: async <T>(method: HttpMethod, path: string, body?: unknown, bearer?: string) =>
      JSON.parse(await text(method, path, body, bearer)) as T,
  };
}

/** A service under test in one process (`--role api,worker`) on an environment of its own. */
export interface Dx extends DxClient {
  engine: Engine;
  env: DxEnv;
  pid: number;
  /** The PostgreSQL schema holding this service's tables (null on SQLite). */
  schema: string | null;
  /** The SQLite file of the service (null on PostgreSQL). */
  sqliteFile: string | null;
  /** Stops the process and removes its environment. */
  close(): Promise<void>;
}

/** Starts a service on `engine` with its own data folder (and schema) under the run's scratch folder. */
export async function startDx(
  ctx: BenchContext,
  engine: Engine,
  settings: Record<string, string> = {},
): Promise<Dx> {
  const env = await createEnv(ctx, engine);
  let service: DxProcess;
  try {
    service = await spawnDx(ctx, env, 'api,worker', settings);
  } catch (err) {
    await env.cleanup().catch(() => undefined);
    throw err;
  }
  return {
    ...dxClient(service.url, env.credentials.token),
    engine,
    env,
    pid: service.pid,
    schema: env.schema,
    sqliteFile: env.sqliteFile,
    close: async () => {
      try {
        await service.close();
      } finally {
        await env.cleanup();
      }
    },
  };
}

/** Migrates the database, creates an app and returns what its client holds. */
async function onboard(url: string, schema: string | null): Promise<AppCredentials> {
  // With a schema, openDatabase creates it and confines the connection to it.
  const database = await openDatabase(url, schema !== null ? { schema } : {});
  try {
    await migrateToLatest(database);
    const app = await createApp(database.db, { name: 'Bench App', alg: 'ES256' });
    const access = await mintAccessToken(
      database.db,
      {
        appKeyKid: null,
        appId: app.app.id,
        installationId: app.installationId,
        workspaceKey: app.workspaceKey,
        permissions: [],
        ttlSeconds: 86_400,
      },
      { cache: tokenMinting(database, new CredentialCache()), epoch: 0 },
    );
    const jwt = await signAppJwt({ appId: app.app.id, privateKeyPem: app.privateKeyPem, kid: app.kid });
    const mintBody = JSON.stringify({
      tokenType: 'appInstallation',
      installationId: app.installationId,
      workspaceKey: app.workspaceKey,
    });
    return { token: access.token, jwt, mintBody };
  } finally {
    await database.close();
  }
}

async function dropSchema(schema: string): Promise<void> {
  const admin = new pg.Client({ connectionString: PG_URL });
  await admin.connect();
  try {
    await admin.query(`drop schema if exists "${schema}" cascade`);
  } finally {
    await admin.end();
  }
}

/** Creates a dataset of the bench records; returns its id. */
export async function createDataset(dx: DxClient, name: string): Promise<string> {
  const ds = await dx.call<{ datasetId: string }>('POST', '/datasets', { name, schema: DATASET_SCHEMA });
  return ds.datasetId;
}

interface JobView {
  currentStatus: { status: string; logData: { rowsLoaded?: number } | null };
}

/** Seconds of one load: in all, and until the upload was stored; and its job. */
export interface LoadTimes {
  seconds: number;
  uploadSeconds: number;
  jobId: string;
}

const UPLOAD = {
  csv: { contentType: 'csv', mediaType: 'text/csv' },
  ndjson: { contentType: 'json', mediaType: 'application/x-ndjson' },
} as const;

/** A load's mode, as the bench uses them. */
export type BenchLoadMode = 'replace' | 'upsert';

/** POST uploadUrl (mode=replace unless told) and PUT `file` to it: the job is queued once this resolves. */
export async function uploadFile(
  dx: DxClient,
  datasetId: string,
  file: string,
  format: FileFormat,
  mode: BenchLoadMode = 'replace',
): Promise<{ jobId: string }> {
  const up = await dx.call<{ url: string; jobId: string }>(
    'POST',
    `/datasets/${datasetId}/uploadUrl?mode=${mode}`,
    { contentType: UPLOAD[format].contentType },
  );
  const put = await request(up.url, {
    method: 'PUT',
    headers: { 'content-type': UPLOAD[format].mediaType, 'content-length': String(statSync(file).size) },
    body: createReadStream(file),
  });
  const answer = await put.body.text();
  if (put.statusCode !== 200) throw new Error(`PUT upload: ${put.statusCode} ${answer}`);
  return { jobId: up.jobId };
}

/** Polls the job every `everyMs` until it is Completed; throws unless it loaded exactly `rows`. */
export async function waitForJob(dx: DxClient, jobId: string, rows: number, everyMs = 50): Promise<void> {
  for (;;) {
    const job = await dx.call<JobView>('GET', `/datasets/jobs/${jobId}`);
    const status = job.currentStatus;
    if (status.status === 'Completed') {
      const loaded = status.logData?.rowsLoaded;
      if (loaded !== rows) throw new Error(`the load reported ${loaded} records, expected ${rows}`);
      return;
    }
    if (status.status === 'Failed' || status.status === 'Expired') {
      throw new Error(`load ${status.status}: ${JSON.stringify(status)}`);
    }
    await sleep(everyMs);
  }
}

/**
 * Loads `file` into the dataset as a client would (POST uploadUrl, PUT the file, poll the job
 * every `everyMs`) with mode=replace unless told, so repeated loads reuse one dataset; returns the
 * seconds from the uploadUrl call to Completed, and to the end of the upload (the PUT's answer)
 * within them. Throws unless the dataset holds exactly `rows` records after it (rowsLoaded).
 */
export async function loadFile(
  dx: DxClient,
  datasetId: string,
  file: string,
  format: FileFormat,
  rows: number,
  everyMs = 50,
  mode: BenchLoadMode = 'replace',
): Promise<LoadTimes> {
  const started = performance.now();
  const { jobId } = await uploadFile(dx, datasetId, file, format, mode);
  const uploadSeconds = (performance.now() - started) / 1000;
  await waitForJob(dx, jobId, rows, everyMs);
  return { seconds: (performance.now() - started) / 1000, uploadSeconds, jobId };
}
