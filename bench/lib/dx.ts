// `dx serve --role api,worker` in its own process (so its RSS is the service's alone), on a fresh
// SQLite file or PostgreSQL schema with one app onboarded, and the calls the load and reads parts
// make to it. close() stops it and removes its files or schema.
import { randomBytes } from 'node:crypto';
import { createReadStream, mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import pg from 'pg';
import { request } from 'undici';
import { mintAccessToken } from '../../src/domain/identity/access-tokens.js';
import { createApp } from '../../src/domain/identity/apps.js';
import { openDatabase } from '../../src/storage/db/database.js';
import { migrateToLatest } from '../../src/storage/db/migrate.js';
import { freePort } from './net.js';
import type { BenchContext } from './part.js';
import { DATASET_SCHEMA, type FileFormat } from './records.js';
import { spawnServer, stop } from './spawn.js';

export type Engine = 'sqlite' | 'postgres';
export const ENGINES: readonly Engine[] = ['sqlite', 'postgres'];
export const ENGINE_NAMES: Record<Engine, string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** The PostgreSQL database of the service and the psql baseline; each service gets its own schema. */
export const PG_URL = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** A running service under test. */
export interface Dx {
  engine: Engine;
  pid: number;
  /** The PostgreSQL schema holding this service's tables (null on SQLite). */
  schema: string | null;
  /** The SQLite file of the service (null on PostgreSQL). */
  sqliteFile: string | null;
  /** An API call (path under /api/v1) with the app's token; the answer's text, or throws on non-2xx. */
  text(method: 'GET' | 'POST', path: string, body?: unknown): Promise<string>;
  call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T>;
  close(): Promise<void>;
}

/** Starts a service on `engine` with its own data folder (and schema) under the run's scratch folder. */
export async function startDx(ctx: BenchContext, engine: Engine): Promise<Dx> {
  const id = randomBytes(4).toString('hex');
  const dataDir = join(ctx.tmp, `dx-${engine}-${id}`);
  const schema = engine === 'postgres' ? `bench_${id}` : null;
  const databaseUrl =
    schema === null
      ? `sqlite:${join(dataDir, 'dx.sqlite')}`
      : `${PG_URL}${PG_URL.includes('?') ? '&' : '?'}options=${encodeURIComponent(`-c search_path=${schema}`)}`;
  const cleanup = async () => {
    rmSync(dataDir, { recursive: true, force: true });
    if (schema !== null) await dropSchema(schema);
  };
  try {
    mkdirSync(dataDir);
    const token = await onboard(schema === null ? databaseUrl : PG_URL, schema);
    const port = await freePort();
    const service = await spawnServer(
      process.execPath,
      [join(ctx.dist, '..', 'bin/dx.js'), 'serve', '--role', 'api,worker'],
      {
        ready: /API listening on (http:\/\/\S+)\/api\/v1/,
        stdoutFile: join(dataDir, 'service.log'),
        env: {
          HOST: '127.0.0.1',
          API_PORT: String(port),
          // Upload and download links are built on it.
          PUBLIC_URL: `http://127.0.0.1:${port}`,
          DATA_DIR: dataDir,
          DATABASE_URL: databaseUrl,
          LOG_LEVEL: 'warn',
        },
      },
    );
    const text = async (method: 'GET' | 'POST', path: string, body?: unknown) => {
      const res = await request(`${service.url}/api/v1${path}`, {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      const answer = await res.body.text();
      if (res.statusCode >= 300) throw new Error(`${method} ${path}: ${res.statusCode} ${answer}`);
      return answer;
    };
    return {
      engine,
      pid: service.child.pid as number,
      schema,
      sqliteFile: schema === null ? join(dataDir, 'dx.sqlite') : null,
      text,
      call: async <T>(method: 'GET' | 'POST', path: string, body?: unknown) =>
        JSON.parse(await text(method, path, body)) as T,
      close: async () => {
        try {
          await stop(service.child);
        } finally {
          await cleanup();
        }
      },
    };
  } catch (err) {
    // The first error is the one to report; a failing cleanup (no database at all) must not hide it.
    await cleanup().catch(() => undefined);
    throw err;
  }
}

/** Migrates the database, creates an app and returns an access token for it. */
async function onboard(url: string, schema: string | null): Promise<string> {
  // With a schema, openDatabase creates it and confines the connection to it.
  const database = await openDatabase(url, schema !== null ? { schema } : {});
  try {
    await migrateToLatest(database);
    const app = await createApp(database.db, { name: 'Bench App', alg: 'ES256' });
    const access = await mintAccessToken(database.db, {
      appKeyKid: null,
      appId: app.app.id,
      installationId: app.installationId,
      workspaceKey: app.workspaceKey,
      permissions: [],
      ttlSeconds: 86_400,
    });
    return access.token;
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
export async function createDataset(dx: Dx, name: string): Promise<string> {
  const ds = await dx.call<{ datasetId: string }>('POST', '/datasets', { name, schema: DATASET_SCHEMA });
  return ds.datasetId;
}

interface JobView {
  currentStatus: { datasetJobStatusName: string; logData: { rowsLoaded?: number } | null };
}

/** Seconds of one load: in all, and until the upload was stored. */
export interface LoadTimes {
  seconds: number;
  uploadSeconds: number;
}

const UPLOAD = {
  csv: { contentType: 'csv', mediaType: 'text/csv' },
  ndjson: { contentType: 'json', mediaType: 'application/x-ndjson' },
} as const;

/**
 * Loads `file` into the dataset as a client would (POST uploadUrl, PUT the file, poll the job
 * every 50 ms) with mode=replace, so repeated loads reuse one dataset; returns the seconds from
 * the uploadUrl call to Completed, and to the end of the upload (the PUT's answer) within them.
 * Throws unless the job loaded exactly `rows` records.
 */
export async function loadFile(
  dx: Dx,
  datasetId: string,
  file: string,
  format: FileFormat,
  rows: number,
): Promise<LoadTimes> {
  const started = performance.now();
  const up = await dx.call<{ url: string; jobId: string }>(
    'POST',
    `/datasets/${datasetId}/uploadUrl?mode=replace`,
    { contentType: UPLOAD[format].contentType },
  );
  const put = await request(up.url, {
    method: 'PUT',
    headers: { 'content-type': UPLOAD[format].mediaType, 'content-length': String(statSync(file).size) },
    body: createReadStream(file),
  });
  const answer = await put.body.text();
  if (put.statusCode !== 200) throw new Error(`PUT upload: ${put.statusCode} ${answer}`);
  const uploadSeconds = (performance.now() - started) / 1000;
  for (;;) {
    const job = await dx.call<JobView>('GET', `/datasets/jobs/${up.jobId}`);
    const status = job.currentStatus;
    if (status.datasetJobStatusName === 'Completed') {
      const seconds = (performance.now() - started) / 1000;
      const loaded = status.logData?.rowsLoaded;
      if (loaded !== rows) throw new Error(`the load reported ${loaded} records, expected ${rows}`);
      return { seconds, uploadSeconds };
    }
    if (status.datasetJobStatusName === 'Failed' || status.datasetJobStatusName === 'Expired') {
      throw new Error(`load ${status.datasetJobStatusName}: ${JSON.stringify(status)}`);
    }
    await sleep(50);
  }
}
