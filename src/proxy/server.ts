// The proxy role: a plain TCP server speaking HTTP/1.1 through llhttp (parser/index.ts; no
// node:http objects, no framework, no HTTP client library on the hot path) that runs each request
// through the admission checks (admission.ts) and streams the exchange to UPSTREAM_URL over a
// keep-alive pool of raw connections.
import { createServer, type Server, type Socket } from 'node:net';
import { listeningUrl } from '../lib/listening-url.js';
import { randomBytes } from 'node:crypto';
import type { Config } from '../config.js';
import { createLogger, roleLogger, type Logger } from '../lib/logger.js';
import { AccessLog } from './access-log.js';
import {
  ID_NOT_IN_MEMORY,
  lookUpProxyId,
  PASS,
  runChecks,
  type AdmissionRules,
  type PassOrRefusal,
} from './admission.js';
import { timeMs } from './clock.js';
import { ClientConnection, type ConnectionHost } from './connection.js';
import { Exchange, type ForwardContext } from './forward.js';
import type { RequestHeaderScan } from './headers.js';
import { ProxyMetrics } from './metrics.js';
import { useParserBackend } from './parser/index.js';
import { ProxyIdCache } from './proxy-id-cache.js';
import { ProxyIdUses } from './proxy-id-uses.js';
import type { ProxyIdStore } from '../domain/identity/proxy-ids.js';
import { createRateLimit } from './shared-rate.js';
import type { RateStore } from './shared-rate.js';
import { UpstreamPool } from './upstream-pool.js';

/** What the proxy needs from the composition root. */
export interface ProxyDeps {
  /** Source of the active proxy IDs (the store on the metadata database), where their uses go. */
  proxyIds: Pick<ProxyIdStore, 'active' | 'recordUse'>;
  /** Access-log and error logger; default: the proxy role's logger at LOG_LEVEL, on stdout. */
  logger?: Logger;
  /** Share of the configured rate this process enforces alone (1 / number of cluster workers). */
  rateShare?: number;
  /** Buckets shared with the other proxy processes; without it the limit is per process. */
  rateStore?: RateStore;
}

/** A listening proxy. */
export interface RunningProxy {
  server: Server;
  /** `http://host:port` it listens on (the real port when PROXY_PORT is 0). */
  url: string;
  metrics: ProxyMetrics;
  proxyIds: ProxyIdCache;
  /** Keeps serving, but every answer says `Connection: close` and ends its connection. */
  drain(): void;
  /** Stops accepting, lets in-flight exchanges finish for up to SHUTDOWN_GRACE_MS, then cuts them. */
  close(): Promise<void>;
}

/** Keep-alive clients should not hit a closed socket: outlive typical client idle timeouts. */
const KEEP_ALIVE_MS = 65_000;
/** Longest time to receive a request's head (node:http's headersTimeout). */
const HEADERS_TIMEOUT_MS = 60_000;
/** Longest time to receive a whole request, body included (node:http's requestTimeout). */
const REQUEST_TIMEOUT_MS = 300_000;
/** How long a connection we ended may linger for the client to close it. */
const LINGER_MS = 5_000;
/**
 * Response bytes a client connection buffers before the upstream is paused: a large answer moves
 * in 256 KB steps (a quarter of the pauses, reads and writes of 64 KB ones), and memory per slow
 * client stays bounded.
 */
const CLIENT_BUFFER = 256 * 1024;

/** Builds the proxy's server (not yet listening). */
export async function createProxy(config: Config, deps: ProxyDeps) {
  if (config.upstreamUrl === null) throw new Error('UPSTREAM_URL is required for the proxy role');
  const upstream = new URL(config.upstreamUrl);
  const p = config.proxy;
  const logger = deps.logger ?? roleLogger(createLogger(config.logLevel), 'proxy');
  const parser = useParserBackend(p.httpParser);
  logger.info({ backend: parser.name, setting: p.httpParser }, 'proxy HTTP parser');
  const metrics = new ProxyMetrics(parser.name);
  const cache = new ProxyIdCache(deps.proxyIds, {
    refreshMs: p.idRefreshMs,
    onError: (err) => logger.error({ err }, 'reloading proxy IDs failed; keeping the previous set'),
  });
  const uses = new ProxyIdUses(deps.proxyIds, logger);
  const limiter = createRateLimit(p, deps, logger, metrics);
  // Pipelining to the upstream stays off: one slow answer must not hold up the ones behind it.
  const pool = new UpstreamPool({
    url: upstream,
    connections: p.upstreamConnections,
    connectTimeoutMs: p.connectTimeoutMs,
    timeoutMs: p.timeoutMs,
  });
  const connections = new Set<ClientConnection<Exchange>>();
  const accessLog = new AccessLog(logger);
  let closing = false;
  const ctx: ForwardContext = {
    pool,
    basePath: upstream.pathname.replace(/\/+$/, ''),
    upstreamHost: upstream.host,
    timeoutMs: p.timeoutMs,
    bodyLimitBytes: p.bodyLimitBytes,
    keepAliveSeconds: KEEP_ALIVE_MS / 1000,
    metrics,
    accessLog,
    closing: () => closing,
  };
  // Request ids the proxy makes up: a random per-process part and a counter; unique without
  // per-request randomness.
  const boot = randomBytes(6).toString('hex');
  let seq = 0;
  /** The caller's X-Request-Id if safe; else a new one, which goes upstream in its place. */
  const requestId = (scan: RequestHeaderScan): string => {
    if (scan.requestId !== null) return scan.requestId;
    const id = `${boot}-${(seq++).toString(36)}`;
    scan.forward.push('X-Request-Id', id);
    return id;
  };

  const host: ConnectionHost<Exchange> = {
    get closing() {
      return closing;
    },
    createExchange: (conn, method, url, scan, http10, keepAlive) =>
      new Exchange(ctx, conn, method, url, scan, requestId(scan), http10, keepAlive),
    startExchange: handle,
    forget: (conn) => {
      connections.delete(conn);
    },
  };

  // Accepted paused: the connection takes the socket over before it reads (client-socket.ts).
  const server: Server = createServer(
    { allowHalfOpen: true, noDelay: true, pauseOnConnect: true, highWaterMark: CLIENT_BUFFER },
    (socket: Socket) => {
      connections.add(new ClientConnection(host, socket, CLIENT_BUFFER));
    },
  );

  // One timer for every client connection's idle, head, request and linger timeouts.
  const sweeper = setInterval(() => {
    const now = timeMs();
    for (const c of connections) {
      if (c.endedAt !== 0) {
        if (now - c.endedAt > LINGER_MS) c.destroy();
      } else if (c.headStartedAt !== 0) {
        if (now - c.headStartedAt > HEADERS_TIMEOUT_MS) c.destroy();
      } else if (c.bodyStartedAt !== 0) {
        if (now - c.bodyStartedAt > REQUEST_TIMEOUT_MS) c.destroy();
      } else if (c.idle && now - c.lastActive > KEEP_ALIVE_MS) c.destroy();
    }
  }, 1000);
  sweeper.unref();

  const rules: AdmissionRules = { proxyIds: cache, rateLimit: limiter, bodyLimitBytes: p.bodyLimitBytes };

  /** Runs the admission checks on an exchange whose turn has come, then forwards or refuses it. */
  function handle(ex: Exchange): void {
    ex.begin();
    const result = runChecks(ex, rules);
    if (result !== ID_NOT_IN_MEMORY) return settle(ex, result);
    lookUpProxyId(ex, rules).then(
      (later) => {
        // The client may have gone meanwhile.
        if (!ex.done) settle(ex, later);
      },
      () => undefined,
    );
  }

  function settle(ex: Exchange, result: PassOrRefusal): void {
    if (result === PASS) {
      // At most once a minute per ID, and beside the request, never before it.
      uses.note(ex.proxyId);
      ex.forward();
    } else ex.reject(result.problem, result.endsConnection);
  }

  /** Closes idle client connections; busy ones close after their current exchange. */
  function closeIdleConnections(): void {
    // An ended connection still flushing its last response is left to finish.
    for (const c of connections) if (c.idle && (c.endedAt === 0 || c.socket.writableFinished)) c.destroy();
  }

  /** Keep-alive clients move on: each answer from now on closes its connection (shutdown's delay). */
  function drain(): void {
    closing = true;
  }

  async function close(graceMs = config.shutdownGraceMs): Promise<void> {
    closing = true;
    cache.stop();
    limiter.stop();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    const drained = (async () => {
      // Connections finishing their exchange end themselves; those that became idle meanwhile close here.
      while (connections.size > 0) {
        closeIdleConnections();
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    if ((await Promise.race([drained.then(() => closed), grace])) === 'timeout') {
      for (const c of connections) c.destroy();
      await pool.destroy();
    } else {
      await pool.close();
    }
    clearTimeout(timer);
    clearInterval(sweeper);
    await closed;
    await uses.flush();
    await accessLog.flush();
  }

  return { server, metrics, cache, logger, drain, close };
}

/** Starts the proxy on HOST:PROXY_PORT after loading the active proxy IDs. */
export async function startProxy(config: Config, deps: ProxyDeps): Promise<RunningProxy> {
  const proxy = await createProxy(config, deps);
  await proxy.cache.start();
  const { server } = proxy;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.proxyPort, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const url = listeningUrl(server);
  proxy.logger.info({ url, upstream: redactOrigin(config.upstreamUrl) }, 'proxy listening');
  return {
    server,
    url,
    metrics: proxy.metrics,
    proxyIds: proxy.cache,
    drain: () => proxy.drain(),
    close: () => proxy.close(),
  };
}

function redactOrigin(url: string | null): string {
  if (url === null) return '';
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}
