// A proxy test stack: a fresh SQLite file with one proxy ID, the dev upstream, and the proxy in
// this process on port 0 with its access log captured.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { Readable } from 'node:stream';
import { request } from 'undici';
import { loadConfig, type Config } from '../../src/config.js';
import { SqlProxyIdStore } from '../../src/domain/identity/proxy-ids.js';
import { startProxy, type RunningProxy } from '../../src/proxy/server.js';
import { openDatabase, type Database } from '../../src/storage/db/database.js';
import { migrateToLatest } from '../../src/storage/db/migrate.js';
import { startDevUpstream, type DevUpstream } from '../support/dev-upstream.js';

/** Valid upstream-style credentials: Basic base64("app:key|1"). */
export const AUTH = `Basic ${Buffer.from('testApp:s3cr3t-api-key|1').toString('base64')}`;

/** A running stack; `close` tears everything down. */
export interface Stack {
  proxy: RunningProxy;
  upstream: DevUpstream;
  database: Database;
  store: SqlProxyIdStore;
  config: Config;
  /** An active proxy ID. */
  id: string;
  /** Parsed access-log lines written so far. */
  logLines: Record<string, unknown>[];
  /** Headers for a valid call through the proxy. */
  headers: Record<string, string>;
  close(): Promise<void>;
}

/** Starts a stack; `env` overrides configuration variables (e.g. PROXY_TIMEOUT_MS). */
export async function startStack(env: Record<string, string> = {}, upstreamUrl?: string): Promise<Stack> {
  const dir = mkdtempSync(join(tmpdir(), 'dx-proxy-test-'));
  const database = await openDatabase(`sqlite:${join(dir, 'dx.sqlite')}`);
  await migrateToLatest(database);
  const store = new SqlProxyIdStore(database.db);
  const { id } = await store.create('test client');
  const upstream = await startDevUpstream();
  const config = loadConfig({
    ROLES: 'proxy',
    HOST: '127.0.0.1',
    PROXY_PORT: '0',
    DATA_DIR: dir,
    UPSTREAM_URL: upstreamUrl ?? upstream.url,
    LOG_LEVEL: 'info',
    // The test list runs the proxy suites once per parser backend (scripts/test.mjs).
    PROXY_HTTP_PARSER: process.env.PROXY_HTTP_PARSER ?? 'auto',
    ...env,
  });
  const logLines: Record<string, unknown>[] = [];
  // A synchronous in-memory destination: every line is visible as soon as the response is over.
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => void logLines.push(JSON.parse(line) as Record<string, unknown>) },
  );
  const proxy = await startProxy(config, { proxyIds: store, logger });
  return {
    proxy,
    upstream,
    database,
    store,
    config,
    id,
    logLines,
    headers: { authorization: AUTH, 'x-proxyvid': id },
    close: async () => {
      await proxy.close();
      await upstream.close();
      await database.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A response read whole. */
export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** One HTTP call with undici; reads the whole body. */
export async function call(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string | Buffer | Readable } = {},
): Promise<Reply> {
  const res = await request(url, {
    method: (options.method ?? 'GET') as 'GET',
    headers: options.headers ?? {},
    body: options.body ?? null,
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}

/** Waits until `predicate` holds (for log lines written after the response). */
export async function eventually(predicate: () => boolean, timeoutMs = 2000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!predicate()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}
