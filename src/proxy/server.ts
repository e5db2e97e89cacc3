// The proxy role: a raw node:http server (no framework on the hot path) that checks the two
// headers, applies the per-ID rate and size limits, and streams the exchange to UPSTREAM_URL.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { Pool } from 'undici';
import type { Config } from '../config.js';
import { AccessLog, createProxyLogger } from './access-log.js';
import { isWellFormedAuthorization } from './auth-check.js';
import { Exchange, type ForwardContext } from './forward.js';
import { scanRequestHeaders, type RequestHeaderScan } from './headers.js';
import { createRegistry, ProxyMetrics } from './metrics.js';
import {
  bodyTooLarge,
  invalidProxyId,
  missingAuthorization,
  rateLimited,
  unsupportedTarget,
} from './problems.js';
import { ProxyIdCache } from './proxy-id-cache.js';
import type { ProxyIdStore } from './proxy-ids.js';
import { RateLimiter } from './rate-limit.js';

/** What the proxy needs from the composition root. */
export interface ProxyDeps {
  /** Source of the active proxy IDs (the store on the metadata database). */
  proxyIds: Pick<ProxyIdStore, 'active'>;
  /** Registry for the proxy's metrics; share the API's to serve both at one /metrics. */
  registry?: Registry;
  /** Access-log and error logger; default: pino at LOG_LEVEL, async to stdout. */
  logger?: Logger;
  /** Share of the configured rate this process enforces (1 / number of cluster workers). */
  rateShare?: number;
}

/** A listening proxy. */
export interface RunningProxy {
  server: Server;
  /** `http://host:port` it listens on (the real port when PROXY_PORT is 0). */
  url: string;
  registry: Registry;
  proxyIds: ProxyIdCache;
  /** Stops accepting, lets in-flight exchanges finish for up to SHUTDOWN_GRACE_MS, then cuts them. */
  close(): Promise<void>;
}

/** A request whose target is not a path is refused rather than forwarded somewhere unexpected. */
const isOriginForm = (url: string | undefined): url is string =>
  url !== undefined && url.charCodeAt(0) === 47;

/** Requests whose unread body is at most this large are drained to keep the connection alive. */
const DRAIN_LIMIT = 64 * 1024;

/** Builds the proxy's request handler and its server (not yet listening). */
export async function createProxy(config: Config, deps: ProxyDeps) {
  if (config.upstreamUrl === null) throw new Error('UPSTREAM_URL is required for the proxy role');
  const upstream = new URL(config.upstreamUrl);
  const p = config.proxy;
  const logger = deps.logger ?? createProxyLogger(config.logLevel);
  const registry = deps.registry ?? createRegistry();
  const cache = new ProxyIdCache(deps.proxyIds, {
    refreshMs: p.idRefreshMs,
    onError: (err) => logger.error({ err }, 'reloading proxy IDs failed; keeping the previous set'),
  });
  const limiter = new RateLimiter(p.rateLimit * (deps.rateShare ?? 1), p.rateBurst);
  const pool = new Pool(upstream.origin, {
    connections: p.upstreamConnections,
    // Pipelining stays off: one slow upstream answer must not hold up the ones queued behind it.
    pipelining: 1,
    connectTimeout: p.connectTimeoutMs,
    headersTimeout: p.timeoutMs,
    bodyTimeout: p.timeoutMs,
  });
  let inFlight = 0;
  let closing = false;
  const server: Server = createServer({ noDelay: true }, handle);
  const ctx: ForwardContext = {
    dispatcher: pool,
    basePath: upstream.pathname.replace(/\/+$/, ''),
    timeoutMs: p.timeoutMs,
    bodyLimitBytes: p.bodyLimitBytes,
    metrics: new ProxyMetrics(registry),
    accessLog: new AccessLog(logger),
    onDone: () => {
      inFlight--;
      if (closing && inFlight === 0) server.closeIdleConnections();
    },
  };
  // Trace IDs: a random per-process part and a counter; unique without per-request randomness.
  const boot = randomBytes(6).toString('hex');
  let seq = 0;

  function handle(req: IncomingMessage, res: ServerResponse): void {
    inFlight++;
    const ex = new Exchange(ctx, req, res, `${boot}-${(seq++).toString(36)}`, performance.now());
    const scan = scanRequestHeaders(req.rawHeaders);
    const unread = scan.hasBody && (scan.contentLength < 0 || scan.contentLength > DRAIN_LIMIT);
    if (!isWellFormedAuthorization(scan.authorization ?? undefined)) {
      return ex.reject(missingAuthorization(), unread);
    }
    const id = scan.proxyId;
    if (id === null || id === undefined) return ex.reject(invalidProxyId(), unread);
    const prefix = cache.lookup(id);
    if (prefix !== undefined) return admit(ex, req, scan, prefix, unread);
    // Not in memory: maybe created since the last reload; the cache bounds how often we ask.
    cache.lookupOrRefresh(id).then(
      (found) =>
        found === undefined ? ex.reject(invalidProxyId(), unread) : admit(ex, req, scan, found, unread),
      () => ex.reject(invalidProxyId(), unread),
    );
  }

  function admit(
    ex: Exchange,
    req: IncomingMessage,
    scan: RequestHeaderScan,
    prefix: string,
    unread: boolean,
  ) {
    ex.proxyId = prefix;
    const wait = limiter.take(prefix);
    if (wait > 0) return ex.reject(rateLimited(wait), unread);
    if (scan.contentLength > p.bodyLimitBytes) return ex.reject(bodyTooLarge(p.bodyLimitBytes), true);
    if (!isOriginForm(req.url)) return ex.reject(unsupportedTarget(), unread);
    ex.forward(scan.forward, scan.hasBody, scan.contentLength);
  }

  async function close(graceMs = config.shutdownGraceMs): Promise<void> {
    closing = true;
    cache.stop();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    let timer: NodeJS.Timeout | undefined;
    const grace = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), graceMs);
    });
    if ((await Promise.race([closed, grace])) === 'timeout') {
      server.closeAllConnections();
      await pool.destroy();
    } else {
      await pool.close();
    }
    clearTimeout(timer);
    await closed;
    await ctx.accessLog.flush();
  }

  return { server, registry, cache, logger, close };
}

/** Starts the proxy on HOST:PROXY_PORT after loading the active proxy IDs. */
export async function startProxy(config: Config, deps: ProxyDeps): Promise<RunningProxy> {
  const proxy = await createProxy(config, deps);
  await proxy.cache.start();
  const { server } = proxy;
  // Keep-alive clients should not hit a closed socket: outlive typical client idle timeouts.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.proxyPort, config.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  proxy.logger.info(
    { url: `http://${host}:${address.port}`, upstream: redactOrigin(config.upstreamUrl) },
    'proxy listening',
  );
  return {
    server,
    url: `http://${host}:${address.port}`,
    registry: proxy.registry,
    proxyIds: proxy.cache,
    close: () => proxy.close(),
  };
}

function redactOrigin(url: string | null): string {
  if (url === null) return '';
  const u = new URL(url);
  return `${u.origin}${u.pathname}`;
}
