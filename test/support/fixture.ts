// The one fixture of the interface suites: the service as `dx serve` starts it (the composition
// root, api + worker roles) on a fresh database of one target, listening on a loopback port, with
// an access token of its own. Tests talk to it in-process (`app.inject`) or over real HTTP
// (`api`, `baseUrl`), look underneath through its services, and restart it on the same data.
import type { FastifyInstance } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import type { Services } from '../../src/domain/services.js';
import type { Database } from '../../src/storage/db/database.js';
import { startService, type RunningService, type StartOptions } from '../../src/runtime/service.js';
import type { DatabaseTarget } from './databases.js';
import { onboardApp, ownToken } from './onboarding.js';
import { startS3, type TestS3 } from './s3-server.js';
// Every answer the suites receive is held to the OpenAPI document (contract.ts).
import './contract.js';

/** A JSON body as tests read it. */
export type Json = Record<string, unknown>;

export interface ApiResponse<T> {
  status: number;
  json: T;
  text: string;
}

/** Calls `baseUrl`/api/v1 over real HTTP with a bearer token; `json` is null when the body is not JSON. */
export async function callApi<T = Json>(
  baseUrl: string,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse<T>> {
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
}

/** The parts of a job that tests look at. */
export interface JobBody {
  datasetJobId: string;
  datasetId: string;
  jobType: string;
  mode: string;
  contentType: string | null;
  currentStatus: {
    /** The service's own status name. */
    status: string;
    /** DXAPI's name: UnknownError for Failed and Expired. */
    datasetJobStatusName: string;
    datasetJobStatusCode: number;
    logData: {
      message: string;
      rowsRead?: number;
      rowsLoaded?: number;
      duplicatesCollapsed?: number;
      rowsRejected?: number;
      recordsAdded?: number;
      recordsReplaced?: number;
      recordsDeleted?: number;
      keysNotFound?: number;
    } | null;
    errorData: { errorCount: number; errors: { line: number; property?: string; message: string }[] } | null;
  };
  /** The signed link to the rejected rows' CSV, when the job has row errors. */
  rejectedRowsUrl?: string | null;
}

export interface Fixture {
  config: Config;
  /** The running service; a restart replaces it, so read it (and what follows) afresh. */
  readonly service: RunningService;
  readonly database: Database;
  /** The service's own object store, record store, notifier …, to look underneath the API. */
  readonly services: Services;
  /** The service's Fastify instance, for in-process `inject`. */
  readonly app: FastifyInstance;
  /** The API's origin over real HTTP (the same port across restarts). */
  baseUrl: string;
  /** What a separate process (the CLI, a worker) needs to join the same database and files. */
  processEnv: { DATABASE_URL: string; DATA_DIR: string };
  /** An access token of the fixture's own app (in its own workspace). */
  token: string;
  /** fetch against /api/v1 with `token`; `T` is the expected JSON body. */
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

/** A fixture whose objects live in an S3-compatible bucket of its own. */
export interface S3Fixture extends Fixture {
  s3: TestS3;
}

const FINAL_STATES = ['Completed', 'Failed', 'Expired'];
let datasetCounter = 0;

/**
 * Starts the service on a fresh database of `target`; `env` overrides configuration variables,
 * `options.logger` replaces the silent logger (tests that read the log).
 */
export async function startFixture(
  target: DatabaseTarget,
  env: Record<string, string> = {},
  options: Pick<StartOptions, 'logger'> = {},
): Promise<Fixture> {
  // The service opens the database itself, as `dx serve` does; the isolated database's own handle
  // made and migrated it, and its dispose drops it.
  const isolated = await target.create();
  let service: RunningService | undefined;
  try {
    const config = loadConfig({
      DATA_DIR: isolated.dataDir,
      DATABASE_URL: isolated.url,
      API_PORT: '0',
      HOST: '127.0.0.1',
      ROLES: 'api,worker',
      LOG_LEVEL: 'silent',
      WORKER_POLL_MS: '50',
      SHUTDOWN_GRACE_MS: '2000',
      ...env,
    });
    const start = () =>
      startService(config, {
        logger: options.logger ?? false,
        ...(isolated.schema !== null ? { database: { schema: isolated.schema } } : {}),
      });
    service = await start();
    const baseUrl = service.apiUrl ?? '';
    // Signed URLs must point at the port actually bound, which a restart binds again.
    config.publicUrl = baseUrl;
    config.apiPort = Number(new URL(baseUrl).port);
    let current = service;
    const fixture: Fixture = {
      config,
      get service() {
        return current;
      },
      get database() {
        return current.database;
      },
      get services() {
        return current.services;
      },
      get app() {
        if (current.api === null) throw new Error('the fixture runs without the api role');
        return current.api;
      },
      baseUrl,
      processEnv: { DATABASE_URL: isolated.processUrl, DATA_DIR: isolated.dataDir },
      token: '',
      api: <T = Json>(method: string, path: string, body?: unknown) =>
        callApi<T>(baseUrl, fixture.token, method, path, body),
      async defineDataset(properties, primaryKey) {
        const res = await fixture.api<{ datasetId: string }>('POST', '/datasets', {
          name: `ds ${datasetCounter++}`,
          schema: { properties, ...(primaryKey !== undefined ? { primaryKey } : {}) },
        });
        if (res.status !== 201) throw new Error(`define dataset: ${res.status} ${res.text}`);
        return res.json.datasetId;
      },
      otherToken: async () => ownToken(fixture, await onboardApp(fixture, 'Another app', 'ES256')),
      async waitForJob(jobId, timeoutMs = 20_000) {
        const until = Date.now() + timeoutMs;
        for (;;) {
          const res = await fixture.api<JobBody>('GET', `/datasets/jobs/${jobId}`);
          if (res.status !== 200) throw new Error(`job ${jobId}: ${res.status} ${res.text}`);
          const status = res.json.currentStatus.status;
          if (FINAL_STATES.includes(status)) return res.json;
          if (Date.now() > until) throw new Error(`job ${jobId} still ${status}`);
          await new Promise((r) => setTimeout(r, 25));
        }
      },
      async restart() {
        await current.close();
        current = await start();
        // Let the client side see its keep-alive sockets to the old process close before reusing any.
        await new Promise((r) => setTimeout(r, 100));
      },
      async close() {
        try {
          await current.close();
        } finally {
          await isolated.dispose();
        }
      },
    };
    fixture.token = await ownToken(fixture, await onboardApp(fixture, 'Fixture app', 'ES256'));
    return fixture;
  } catch (err) {
    await service?.close();
    await isolated.dispose();
    throw err;
  }
}

/** As startFixture, with STORAGE=s3 on a bucket of its own in the tests' S3 store (s3-server.ts), gone with it. */
export async function startFixtureOnS3(
  target: DatabaseTarget,
  env: Record<string, string> = {},
): Promise<S3Fixture> {
  const s3 = await startS3();
  let fixture: Fixture;
  try {
    fixture = await startFixture(target, { ...s3.env, ...env });
  } catch (err) {
    await s3.close();
    throw err;
  }
  const closeService = fixture.close.bind(fixture);
  // Assigned onto the fixture itself: its getters must keep following restarts.
  return Object.assign(fixture, {
    s3,
    async close() {
      try {
        await closeService();
      } finally {
        // The bucket (and s3rver's child process) must not outlive the suite, whatever failed before.
        await s3.close();
      }
    },
  });
}
