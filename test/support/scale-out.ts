// The stack of the scale-out tests: the API (in the test process) on a fresh PostgreSQL schema
// with S3 storage, and the environment that lets `dx serve --role worker` children join it.
import { join } from 'node:path';
import type { DatabaseTarget } from './databases.js';
import { startFixtureOnS3, type S3Fixture } from './fixture.js';
import { startWorkerProcess, type WorkerProcess } from './workers.js';

/** The CLI, as an operator runs it. */
export const BIN = join(process.cwd(), 'bin', 'dx.js');

export interface ScaleOutStack {
  h: S3Fixture;
  /** Starts a worker process on the stack's schema and bucket; `env` overrides settings. */
  worker(env?: Record<string, string>): WorkerProcess;
  close(): Promise<void>;
}

/** Starts the S3 server and the API on `target` (PostgreSQL); workers are started by the tests. */
export async function startScaleOutStack(target: DatabaseTarget): Promise<ScaleOutStack> {
  // Clients PUT to the bucket's presigned URLs, so the worker processes must notice the uploads.
  const env = { S3_TRANSFERS: 'direct', LOAD_URL_ALLOWLIST: '127.0.0.1/32' };
  const h = await startFixtureOnS3(target, { ...env, ROLES: 'api' });
  const base = {
    // The bucket's settings and its credentials.
    ...h.s3.env,
    ...env,
    // A child joins the schema through the connection's search_path, as any deployment could.
    ...h.processEnv,
    WORKER_CONCURRENCY: '2',
    WORKER_POLL_MS: '50',
    S3_POLL_MS: '100',
    JOB_LEASE_MS: '2000',
    SHUTDOWN_GRACE_MS: '5000',
    LOG_LEVEL: 'info',
  };
  const started: WorkerProcess[] = [];
  return {
    h,
    worker(env = {}) {
      const w = startWorkerProcess(BIN, { ...base, ...env });
      started.push(w);
      return w;
    },
    async close() {
      for (const w of started) w.kill('SIGKILL');
      await Promise.all(started.map((w) => w.exited));
      await h.close();
    },
  };
}
