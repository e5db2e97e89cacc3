// A listening service (api + worker roles, as `dx serve` runs them) on a fresh SQLite file or a
// fresh PostgreSQL schema, with an app and an access token, for the loading and records tests.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { databaseTargets, POSTGRES_URL } from './databases.js';
import { loadConfig, type Config } from '../../src/config.js';
import { createApp } from '../../src/domain/identity/apps.js';
import { mintAccessToken } from '../../src/domain/identity/access-tokens.js';
import { createObjectStore, type ObjectStore } from '../../src/storage/objects/index.js';
import { createRecordStore, type RecordStore } from '../../src/storage/records/index.js';
import { startService, type RunningService } from '../../src/runtime/service.js';

export type Dialect = 'sqlite' | 'postgres';

/** Why the dialect's tests are skipped, or false when they run (same probe as the other suites). */
export async function postgresSkip(): Promise<string | false> {
  const pgTarget = (await databaseTargets()).find((t) => t.name === 'postgres');
  return pgTarget?.skip ?? false;
}

/** A JSON body as tests read it. */
export type Json = Record<string, unknown>;

export interface ApiResponse<T> {
  status: number;
  json: T;
  text: string;
}

/** The parts of a job that tests look at. */
export interface JobBody {
  datasetJobId: string;
  datasetId: string;
  jobType: string;
  mode: string;
  contentType: string | null;
  currentStatus: {
    datasetJobStatusName: string;
    datasetJobStatusCode: number;
    logData: { message: string; rowsRead?: number; rowsLoaded?: number; duplicatesCollapsed?: number } | null;
    errorData: { errorCount: number; errors: { line: number; property?: string; message: string }[] } | null;
  };
}

export interface Harness {
  config: Config;
  /** The record store of the service's database (to look at tables). */
  records: RecordStore;
  objects: ObjectStore;
  service: RunningService;
  baseUrl: string;
  token: string;
  /** fetch against /api/v1 with the access token; `T` is the expected JSON body. */
  api<T = Json>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>>;
  /** Defines a dataset and returns its id. */
  defineDataset(
    properties: { name: string; type: string; required?: boolean }[],
    primaryKey?: string[],
  ): Promise<string>;
  /** An access token of another app (in its own workspace): it must see none of this app's data. */
  otherToken(): Promise<string>;
  /** Polls a job until it reaches a final state. */
  waitForJob(jobId: string, timeoutMs?: number): Promise<JobBody>;
  /** Stops the service and starts it again on the same database, files and port. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

let counter = 0;

/** Starts a service for one test file; `env` overrides configuration variables. */
export async function startHarness(dialect: Dialect, env: Record<string, string> = {}): Promise<Harness> {
  const dir = await mkdtemp(join(tmpdir(), 'dx-load-'));
  const schema = `t_load_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  const config = loadConfig({
    DATA_DIR: dir,
    DATABASE_URL: dialect === 'sqlite' ? `sqlite:${join(dir, 'dx.sqlite')}` : POSTGRES_URL,
    API_PORT: '0',
    HOST: '127.0.0.1',
    ROLES: 'api,worker',
    LOG_LEVEL: 'silent',
    WORKER_POLL_MS: '50',
    SHUTDOWN_GRACE_MS: '2000',
    ...env,
  });
  const start = () =>
    startService(config, { logger: false, ...(dialect === 'postgres' ? { database: { schema } } : {}) });
  let service = await start();
  const baseUrl = service.apiUrl ?? '';
  // Signed URLs must point at the port actually bound, which a restart binds again.
  config.publicUrl = baseUrl;
  config.apiPort = Number(new URL(baseUrl).port);
  const newToken = async (name: string) => {
    const created = await createApp(service.database.db, { name, alg: 'ES256' });
    const issued = await mintAccessToken(service.database.db, {
      appKeyKid: null,
      appId: created.app.id,
      installationId: created.installationId,
      workspaceKey: created.workspaceKey,
      permissions: [],
      ttlSeconds: 3600,
    });
    return issued.token;
  };
  const token = await newToken('Loader test app');
  const api = async <T = Json>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> => {
    const res = await fetch(`${baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let json: unknown = null;
    try {
      json = JSON.parse(text);
    } catch {
      json = null;
    }
    return { status: res.status, json: json as T, text };
  };
  const defineDataset: Harness['defineDataset'] = async (properties, primaryKey) => {
    const res = await api<{ datasetId: string }>('POST', '/datasets', {
      name: `ds ${counter++}`,
      schema: { properties, ...(primaryKey !== undefined ? { primaryKey } : {}) },
    });
    if (res.status !== 201) throw new Error(`define dataset: ${res.status} ${res.text}`);
    return res.json.datasetId;
  };
  const waitForJob: Harness['waitForJob'] = async (jobId, timeoutMs = 20_000) => {
    const until = Date.now() + timeoutMs;
    for (;;) {
      const res = await api<JobBody>('GET', `/datasets/jobs/${jobId}`);
      if (res.status !== 200) throw new Error(`job ${jobId}: ${res.status} ${res.text}`);
      if (['Completed', 'Failed', 'Expired'].includes(res.json.currentStatus.datasetJobStatusName))
        return res.json;
      if (Date.now() > until)
        throw new Error(`job ${jobId} still ${res.json.currentStatus.datasetJobStatusName}`);
      await new Promise((r) => setTimeout(r, 25));
    }
  };
  const harness: Harness = {
    config,
    service,
    records: createRecordStore(service.database),
    objects: createObjectStore(config),
    baseUrl,
    token,
    api,
    defineDataset,
    waitForJob,
    otherToken: () => newToken('Another app'),
    async restart() {
      await service.close();
      service = await start();
      harness.service = service;
      // Let the client side see its keep-alive sockets to the old process close before reusing any.
      await new Promise((r) => setTimeout(r, 100));
    },
    async close() {
      await service.close();
      if (dialect === 'postgres') {
        const admin = new pg.Client({ connectionString: POSTGRES_URL });
        await admin.connect();
        await admin.query(`drop schema if exists "${schema}" cascade`);
        await admin.end();
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
  return harness;
}
