// One typed configuration, read from the environment (and CLI flags) once at start and passed down.
import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { redactUrl } from './lib/redact.js';
import { allowlistEntryProblem } from './net/address-policy.js';
import {
  readStorageConfig,
  S3_TRANSFERS,
  STORAGE_KINDS,
  type StorageConfig,
} from './config/object-storage.js';
import { readMailConfig, type MailSettings } from './config/mail.js';

export const ROLES = ['api', 'worker', 'proxy'] as const;

/** What a load does with bytes that are not UTF-8 (LOAD_INVALID_UTF8): a row error, or U+FFFD. */
export const INVALID_UTF8_CHOICES = ['reject', 'replace'] as const;
export type InvalidUtf8 = (typeof INVALID_UTF8_CHOICES)[number];
export type Role = (typeof ROLES)[number];
/**
 * The proxy's HTTP/1 parser (PROXY_HTTP_PARSER): Node's built-in binding, llhttp in WebAssembly,
 * or `auto`, the built-in one when this Node.js has a working one (src/proxy/parser/).
 */
export const PROXY_HTTP_PARSERS = ['auto', 'builtin', 'wasm'] as const;
export type ProxyHttpParser = (typeof PROXY_HTTP_PARSERS)[number];

/** How one environment variable is read: its default and its check. A tiny schema, no library:
 * the CLI reads the configuration on every command and must start fast. */
interface VarSpec<T> {
  default: T;
  parse(raw: string): T | { error: string };
}

const text = (fallback: string): VarSpec<string> => ({ default: fallback, parse: (raw) => raw });
const integer = (fallback: number, min: number, max: number): VarSpec<number> => ({
  default: fallback,
  parse: (raw) => {
    const n = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(n)) return { error: 'must be an integer' };
    if (n < min || n > max) return { error: `must be between ${min} and ${max}` };
    return n;
  },
});
const decimal = (fallback: number, min: number): VarSpec<number> => ({
  default: fallback,
  parse: (raw) => {
    const n = Number(raw);
    if (raw.trim() === '' || !Number.isFinite(n)) return { error: 'must be a number' };
    return n < min ? { error: `must be at least ${min}` } : n;
  },
});
const boolean = (fallback: boolean): VarSpec<boolean> => ({
  default: fallback,
  parse: (raw) => {
    const v = raw.trim().toLowerCase();
    if (['true', '1', 'yes'].includes(v)) return true;
    if (['false', '0', 'no'].includes(v)) return false;
    return { error: 'must be true or false' };
  },
});
const oneOf = <T extends string>(fallback: T, values: readonly T[]): VarSpec<T> => ({
  default: fallback,
  parse: (raw) =>
    (values as readonly string[]).includes(raw)
      ? (raw as T)
      : { error: `must be one of ${values.join(', ')}` },
});

/** Every environment variable the service reads, with its default; the README's table mirrors this. */
const ENV = {
  HOST: text('0.0.0.0'),
  API_PORT: integer(8080, 0, 65535),
  PROXY_PORT: integer(8081, 0, 65535),
  // -1: not set (the API's port when the API runs here, else DEFAULT_ADMIN_PORT).
  ADMIN_PORT: integer(-1, 0, 65535),
  ADMIN_HOST: text(''),
  // Reverse proxies whose X-Forwarded-For is believed: '' none, a hop count, or addresses/CIDRs.
  TRUST_PROXY: text(''),
  ROLES: text(''),
  DATA_DIR: text('./data'),
  DATABASE_URL: text(''),
  // PostgreSQL connections per process pool (config/database-pool.ts: the budget and its check).
  DATABASE_POOL_SIZE: integer(10, 1, 1000),
  PUBLIC_URL: text(''),
  SIGNING_SECRET: text(''),
  JWT_AUDIENCE: text(''),
  ACCESS_TOKEN_TTL_SECONDS: integer(3600, 60, 86400),
  LOG_LEVEL: oneOf('info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
  UPSTREAM_URL: text(''),
  SHUTDOWN_DELAY_MS: integer(5000, 0, 600000),
  SHUTDOWN_GRACE_MS: integer(10000, 0, 600000),
  // The request proxy (src/proxy).
  PROXY_TIMEOUT_MS: integer(30000, 1, 3600000),
  PROXY_CONNECT_TIMEOUT_MS: integer(5000, 1, 600000),
  PROXY_BODY_LIMIT_BYTES: integer(10485760, 0, Number.MAX_SAFE_INTEGER),
  PROXY_RATE_LIMIT: decimal(0, 0),
  PROXY_RATE_BURST: integer(0, 0, 1000000),
  // How often each proxy process reports to the rate-limit buckets it shares with the others
  // through the database (proxy/shared-rate.ts); 0 keeps the limit per process.
  PROXY_RATE_SYNC_MS: integer(100, 0, 60000),
  PROXY_ID_REFRESH_MS: integer(5000, 100, 3600000),
  PROXY_WORKERS: integer(1, 1, 64),
  PROXY_UPSTREAM_CONNECTIONS: integer(128, 1, 10000),
  PROXY_HTTP_PARSER: oneOf('auto', PROXY_HTTP_PARSERS),
  // Loading (src/worker, src/storage/objects).
  UPLOAD_MAX_BYTES: integer(5 * 1024 ** 3, 1, Number.MAX_SAFE_INTEGER),
  LOAD_URL_ALLOWLIST: text(''),
  // 0: ten times UPLOAD_MAX_BYTES.
  MAX_INFLATED_BYTES: integer(0, 0, Number.MAX_SAFE_INTEGER),
  LOAD_INVALID_UTF8: oneOf('reject', INVALID_UTF8_CHOICES),
  WORKER_CONCURRENCY: integer(1, 1, 64),
  JOB_LEASE_MS: integer(30000, 1000, 3600000),
  // An idle worker's claim query is one index probe: 4 a second cost little and cut a job's wait.
  WORKER_POLL_MS: integer(250, 10, 600000),
  EXPORT_DOWNLOADS_MAX: integer(4, 1, 1000),
  // How long the change feed keeps a dataset's changes (domain/changes/batches.ts): 7 days; 0
  // turns the feed off (loads record no changes).
  CHANGES_RETENTION_HOURS: integer(168, 0, 87600),
  // The web console's sessions (domain/console/sessions.ts).
  CONSOLE_SESSION_IDLE_MINUTES: integer(30, 1, 1440),
  CONSOLE_SESSION_MAX_HOURS: integer(12, 1, 720),
  // Outgoing mail: password reset links asked for from the sign-in page (config/mail.ts).
  SMTP_URL: text(''),
  MAIL_FROM: text(''),
  // App webhooks (src/worker/webhooks.ts).
  WEBHOOK_URL_ALLOWLIST: text(''),
  WEBHOOK_RETRY_BASE_MS: integer(10000, 1, 3600000),
  WEBHOOK_TIMEOUT_MS: integer(10000, 100, 600000),
  // The object store (config/object-storage.ts checks how they combine).
  STORAGE: oneOf('local', STORAGE_KINDS),
  S3_BUCKET: text(''),
  S3_REGION: text('us-east-1'),
  S3_ENDPOINT: text(''),
  S3_PUBLIC_ENDPOINT: text(''),
  S3_FORCE_PATH_STYLE: boolean(false),
  S3_TRANSFERS: oneOf('service', S3_TRANSFERS),
  S3_NOTIFICATION_TOKEN: text(''),
  S3_POLL_MS: integer(2000, 100, 3600000),
};
type EnvName = keyof typeof ENV;
/** Every variable's name: the README's table must list each (config.test.ts checks). */
export const ENV_NAMES = Object.keys(ENV) as EnvName[];
type Env = { [K in EnvName]: (typeof ENV)[K]['default'] };

/** Reads every variable; a bad one is reported and replaced by its default so the rest is still checked. */
function readEnv(source: Record<string, string | undefined>, problems: string[]): Env {
  const out: Record<string, unknown> = {};
  for (const [name, spec] of Object.entries(ENV) as [EnvName, VarSpec<unknown>][]) {
    const raw = source[name];
    if (raw === undefined || raw === '') {
      out[name] = spec.default;
      continue;
    }
    const value = spec.parse(raw);
    if (typeof value === 'object' && value !== null && 'error' in value) {
      problems.push(`${name}: ${String(value.error)} (got ${JSON.stringify(raw)})`);
      out[name] = spec.default;
    } else {
      out[name] = value;
    }
  }
  return out as Env;
}

/** A console session ends after `idleMs` without a request or `absoluteMs` after sign-in. */
export interface SessionLifetime {
  idleMs: number;
  absoluteMs: number;
}

/** Whose X-Forwarded-For the API believes: nobody (false), the nearest N hops, or these addresses. */
export type TrustProxy = false | number | string[];

/** The names proxy-addr (Fastify's trustProxy) knows besides addresses and CIDRs. */
const TRUST_PROXY_NAMES = ['loopback', 'linklocal', 'uniquelocal'];

function parseTrustProxy(raw: string, problems: string[]): TrustProxy {
  const value = raw.trim();
  if (value === '') return false;
  if (/^\d+$/.test(value)) {
    const hops = Number(value);
    if (hops >= 1 && hops <= 10) return hops;
    problems.push(`TRUST_PROXY: a hop count must be between 1 and 10 (got ${value})`);
    return false;
  }
  const entries = value.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address = '', prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const prefixOk =
      prefix === undefined || (/^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 6 ? 128 : 32));
    if (!TRUST_PROXY_NAMES.includes(entry) && (family === 0 || !prefixOk || rest.length > 0))
      problems.push(
        `TRUST_PROXY: ${JSON.stringify(entry)} is not an IP address, a CIDR or one of ${TRUST_PROXY_NAMES.join(', ')}`,
      );
  }
  return entries;
}

/** The admin port of a process that runs no API (the port of OpenTelemetry's Prometheus exporter). */
export const DEFAULT_ADMIN_PORT = 9464;

export interface Config {
  host: string;
  apiPort: number;
  proxyPort: number;
  /** Where /healthz, /readyz and /metrics are served; see `AdminConfig`. */
  admin: AdminConfig;
  /** Which reverse proxies' X-Forwarded-For gives the client's address (TRUST_PROXY); see `TrustProxy`. */
  trustProxy: TrustProxy;
  roles: Role[];
  dataDir: string;
  /** `sqlite:<file>` or a `postgres://` URL. */
  databaseUrl: string;
  /** PostgreSQL connections of this process's pool at most (DATABASE_POOL_SIZE). */
  databasePoolSize: number;
  /** Base URL that clients reach the API at; signed upload and download links are built on it. */
  publicUrl: string;
  /** HMAC key for signed URLs. Empty means: generate one and keep it in DATA_DIR. */
  signingSecret: string;
  jwtAudience: string | null;
  accessTokenTtlSeconds: number;
  logLevel: string;
  upstreamUrl: string | null;
  /** After SIGTERM, how long the listeners go on serving (with /readyz 503) before they close. */
  shutdownDelayMs: number;
  /** Once the listeners close, how long in-flight requests, exchanges and jobs may take. */
  shutdownGraceMs: number;
  /** Largest file accepted by an upload URL or fetched by records:load. */
  uploadMaxBytes: number;
  /** The most bytes a gzip file may inflate to while it loads (MAX_INFLATED_BYTES). */
  maxInflatedBytes: number;
  /** Bytes that are not UTF-8 in a loaded file: a row error, or replaced by U+FFFD. */
  loadInvalidUtf8: InvalidUtf8;
  /** Hosts and CIDRs that records:load may fetch from although they are internal (LOAD_URL_ALLOWLIST). */
  loadUrlAllowlist: string[];
  workerConcurrency: number;
  /** How long a claimed job stays claimed without a heartbeat. */
  jobLeaseMs: number;
  /** How often an idle worker looks for queued jobs (jobs queued in-process wake it at once). */
  workerPollMs: number;
  /** Export downloads one API process streams at once (each holds a database connection). */
  exportDownloadsMax: number;
  /** How long the change feed keeps changes; a cursor older than that answers 410. 0: the feed is
   * off (no change is recorded; `changeFeedOn`). */
  changesRetentionMs: number;
  /** How long a console session lives: idle, and at most after sign-in. */
  consoleSessions: SessionLifetime;
  /** Outgoing mail (password reset links by mail); null when SMTP_URL is not set. */
  mail: MailSettings | null;
  /** The request proxy's tuning; see `ProxyConfig`. */
  proxy: ProxyConfig;
  /** App webhooks: where they may point and how they are retried. */
  webhooks: WebhookConfig;
  /** Where uploads and exports live: files under DATA_DIR, or an S3-compatible bucket. */
  storage: StorageConfig;
}

/**
 * The admin address. `port` null (ADMIN_PORT not set): the API's port when the API runs in the
 * process, else DEFAULT_ADMIN_PORT. A port of its own (any other value, 0 included) gets its own
 * listener on `host`, and /metrics is then served there only, not on the API's public port.
 */
export interface AdminConfig {
  host: string;
  port: number | null;
}

/** Settings of the request proxy role. */
export interface ProxyConfig {
  /** Longest wait for the upstream's response headers, and longest silence within a body. */
  timeoutMs: number;
  connectTimeoutMs: number;
  /** Largest request body forwarded; larger ones get 413. */
  bodyLimitBytes: number;
  /** Requests per second per proxy ID (token bucket refill rate); 0 turns rate limiting off. */
  rateLimit: number;
  /** Bucket size: requests a proxy ID may send at once; defaults to max(1, rateLimit). */
  rateBurst: number;
  /**
   * How often each proxy process settles its rate-limit buckets with the ones shared through the
   * database; 0 keeps the limit per process (each of N processes then admits the whole rate).
   */
  rateSyncMs: number;
  /** How often the in-memory set of active proxy IDs is reloaded from the database. */
  idRefreshMs: number;
  /** Processes serving the proxy port (node:cluster); 1 runs it in the calling process. */
  workers: number;
  /** Keep-alive connections per worker to the upstream. */
  upstreamConnections: number;
  /** Which HTTP/1 parser the proxy runs. */
  httpParser: ProxyHttpParser;
}

/** Settings of app webhook deliveries. */
export interface WebhookConfig {
  /** Hosts and CIDRs a webhook may point at although they are internal (WEBHOOK_URL_ALLOWLIST). */
  urlAllowlist: string[];
  /** The first retry's wait; each next one doubles it, up to an hour. */
  retryBaseMs: number;
  /** How long an attempt may take (connect, send, response headers). */
  timeoutMs: number;
}

/** A configuration mistake; `problems` holds one message per bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
  }
}

/** Reads and validates the configuration; overrides (from CLI flags) win over the environment. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Record<EnvName, string>> = {},
): Config {
  const problems: string[] = [];
  const e = readEnv({ ...env, ...overrides }, problems);

  const roles = parseRoles(e.ROLES, e.UPSTREAM_URL !== '', problems);
  const dataDir = resolve(e.DATA_DIR);
  const databaseUrl = e.DATABASE_URL || `sqlite:${resolve(dataDir, 'dx.sqlite')}`;
  if (!/^(sqlite:|postgres(ql)?:\/\/)/.test(databaseUrl)) {
    problems.push(`DATABASE_URL: must start with sqlite: or postgres:// (got ${redactUrl(databaseUrl)})`);
  }
  const publicUrl = (e.PUBLIC_URL || `http://localhost:${e.API_PORT}`).replace(/\/+$/, '');
  if (!isHttpUrl(publicUrl)) problems.push(`PUBLIC_URL: must be an http(s) URL (got ${e.PUBLIC_URL})`);
  if (e.SIGNING_SECRET !== '' && e.SIGNING_SECRET.length < 32) {
    problems.push('SIGNING_SECRET: must be at least 32 characters');
  }
  if (e.UPSTREAM_URL !== '' && !isHttpUrl(e.UPSTREAM_URL)) {
    problems.push(`UPSTREAM_URL: must be an http(s) URL (got ${e.UPSTREAM_URL})`);
  }
  if (roles.includes('proxy') && e.UPSTREAM_URL === '') {
    problems.push('UPSTREAM_URL: required when the proxy role runs');
  }
  const loadUrlAllowlist = e.LOAD_URL_ALLOWLIST.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of loadUrlAllowlist) {
    const bad = allowlistEntryProblem(entry);
    if (bad !== null) problems.push(`LOAD_URL_ALLOWLIST: ${bad}`);
  }
  const webhookUrlAllowlist = e.WEBHOOK_URL_ALLOWLIST.split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of webhookUrlAllowlist) {
    const bad = allowlistEntryProblem(entry);
    if (bad !== null) problems.push(`WEBHOOK_URL_ALLOWLIST: ${bad}`);
  }
  if (e.PROXY_RATE_SYNC_MS > 0 && e.PROXY_RATE_SYNC_MS < 10) {
    problems.push('PROXY_RATE_SYNC_MS: must be 0 (per-process limit) or at least 10');
  }
  const trustProxy = parseTrustProxy(e.TRUST_PROXY, problems);
  const storage = readStorageConfig(e, problems);
  const mail = readMailConfig(e, problems);
  if (problems.length > 0) throw new ConfigError(problems);

  return {
    host: e.HOST,
    apiPort: e.API_PORT,
    proxyPort: e.PROXY_PORT,
    admin: { host: e.ADMIN_HOST || e.HOST, port: e.ADMIN_PORT < 0 ? null : e.ADMIN_PORT },
    trustProxy,
    roles,
    dataDir,
    databaseUrl,
    databasePoolSize: e.DATABASE_POOL_SIZE,
    publicUrl,
    signingSecret: e.SIGNING_SECRET,
    jwtAudience: e.JWT_AUDIENCE || null,
    accessTokenTtlSeconds: e.ACCESS_TOKEN_TTL_SECONDS,
    logLevel: e.LOG_LEVEL,
    upstreamUrl: e.UPSTREAM_URL || null,
    shutdownDelayMs: e.SHUTDOWN_DELAY_MS,
    shutdownGraceMs: e.SHUTDOWN_GRACE_MS,
    uploadMaxBytes: e.UPLOAD_MAX_BYTES,
    maxInflatedBytes: e.MAX_INFLATED_BYTES || Math.min(10 * e.UPLOAD_MAX_BYTES, Number.MAX_SAFE_INTEGER),
    loadInvalidUtf8: e.LOAD_INVALID_UTF8,
    loadUrlAllowlist,
    workerConcurrency: e.WORKER_CONCURRENCY,
    jobLeaseMs: e.JOB_LEASE_MS,
    workerPollMs: e.WORKER_POLL_MS,
    exportDownloadsMax: e.EXPORT_DOWNLOADS_MAX,
    changesRetentionMs: e.CHANGES_RETENTION_HOURS * 3_600_000,
    consoleSessions: {
      idleMs: e.CONSOLE_SESSION_IDLE_MINUTES * 60_000,
      absoluteMs: e.CONSOLE_SESSION_MAX_HOURS * 3_600_000,
    },
    mail,
    proxy: {
      timeoutMs: e.PROXY_TIMEOUT_MS,
      connectTimeoutMs: e.PROXY_CONNECT_TIMEOUT_MS,
      bodyLimitBytes: e.PROXY_BODY_LIMIT_BYTES,
      rateLimit: e.PROXY_RATE_LIMIT,
      rateBurst: e.PROXY_RATE_BURST || Math.max(1, Math.ceil(e.PROXY_RATE_LIMIT)),
      rateSyncMs: e.PROXY_RATE_SYNC_MS,
      idRefreshMs: e.PROXY_ID_REFRESH_MS,
      workers: e.PROXY_WORKERS,
      upstreamConnections: e.PROXY_UPSTREAM_CONNECTIONS,
      httpParser: e.PROXY_HTTP_PARSER,
    },
    webhooks: {
      urlAllowlist: webhookUrlAllowlist,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
    },
    storage,
  };
}

function parseRoles(value: string, hasUpstream: boolean, problems: string[]): Role[] {
  if (value.trim() === '') return hasUpstream ? ['api', 'worker', 'proxy'] : ['api', 'worker'];
  const roles: Role[] = [];
  for (const part of value.split(',').map((s) => s.trim())) {
    if ((ROLES as readonly string[]).includes(part)) roles.push(part as Role);
    else problems.push(`ROLES: unknown role "${part}" (use ${ROLES.join(', ')})`);
  }
  return [...new Set(roles)];
}

function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === 'http:' || u.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Whether the change feed is on: loads and schema changes record their changes (docs/loading.md,
 * "Following changes"). */
export function changeFeedOn(config: Pick<Config, 'changesRetentionMs'>): boolean {
  return config.changesRetentionMs > 0;
}
