// One request's life in the proxy: the exchange is both the bookkeeping (times, bytes, status for
// the log and metrics) and undici's dispatch handler, so a forwarded request allocates one object
// of ours. Bodies stream both ways; backpressure pauses the upstream when the client reads slowly.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { ProblemError } from '../errors.js';
import { ms, type AccessLog } from './access-log.js';
import { redactQuery, responseHeaders } from './headers.js';
import { UNKNOWN_PROXY_ID, type ProxyMetrics } from './metrics.js';
import { bodyTooLarge, sendProblem, upstreamTimeout, upstreamUnreachable } from './problems.js';

/** What every exchange shares: the upstream, the limits, and where results are reported. */
export interface ForwardContext {
  dispatcher: Dispatcher;
  /** Path prefix of UPSTREAM_URL ('' when it has none). */
  basePath: string;
  timeoutMs: number;
  bodyLimitBytes: number;
  metrics: ProxyMetrics;
  accessLog: AccessLog;
  /** Called once per exchange when its response is over (or the client went away). */
  onDone: () => void;
}

/** Status recorded when the client closed the connection before the response was complete. */
const CLIENT_CLOSED = 499;
const TIMEOUT_CODES = new Set(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'UND_ERR_CONNECT_TIMEOUT']);

class ClientClosedError extends Error {}

/** Request bodies of a declared length up to this many bytes are read whole before forwarding. */
const SMALL_BODY = 16 * 1024;

/** A request in flight through the proxy. */
export class Exchange implements Dispatcher.DispatchHandler {
  proxyId = UNKNOWN_PROXY_ID;
  private status = 0;
  private bytesIn = 0;
  private bytesOut = 0;
  private upstreamStart = 0;
  private upstreamMs = -1;
  private abortUpstream: ((err?: Error) => void) | null = null;
  private resumeUpstream: (() => void) | null = null;
  private tooLarge = false;
  private error: string | undefined;
  private draining = false;

  constructor(
    private readonly ctx: ForwardContext,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    readonly traceId: string,
    private readonly startedAt: number,
  ) {
    res.once('close', this.onClose);
  }

  /** Answers with one of the proxy's own problems instead of forwarding. */
  reject(err: ProblemError, unreadBody: boolean): void {
    this.status = err.status;
    this.error = err.title;
    // Reading an unwanted large body just to keep the connection is worse than reconnecting.
    this.bytesOut = sendProblem(this.res, err, this.traceId, unreadBody);
  }

  /** Sends the request upstream. `headers` are the forwardable ones; `contentLength` -1 if unknown. */
  forward(headers: string[], hasBody: boolean, contentLength: number): void {
    const { req } = this;
    let body: Readable | null = null;
    if (hasBody && contentLength >= 0 && contentLength <= SMALL_BODY) {
      // A small body (usually in the same packet as its headers) is read whole and sent with the
      // request's headers in one write: streaming it costs a second write and the stream machinery.
      this.bytesIn = contentLength;
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.once('end', () => {
        // A client that gave up mid-body was already logged as such when its response closed.
        if (this.res.destroyed) return;
        this.dispatch(headers, chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks));
      });
      return;
    }
    if (hasBody) {
      if (contentLength >= 0) {
        // node's parser enforces the declared length, and it was checked against the limit.
        body = req;
        this.bytesIn = contentLength;
      } else {
        // pipe, not pipeline: the limit failing must not destroy the socket the 413 goes out on.
        const limiter = new ByteLimit(this.ctx.bodyLimitBytes, this);
        req.once('error', (err) => limiter.destroy(err));
        body = req.pipe(limiter);
      }
    }
    this.dispatch(headers, body);
  }

  private dispatch(headers: string[], body: Readable | Buffer | null): void {
    const { req } = this;
    this.upstreamStart = performance.now();
    this.ctx.dispatcher.dispatch(
      {
        path: this.ctx.basePath + (req.url as string),
        method: req.method as Dispatcher.HttpMethod,
        headers,
        body,
      },
      this,
    );
  }

  /** Called by ByteLimit as chunked request bytes stream through. */
  countIn(n: number, limit: number): boolean {
    this.bytesIn += n;
    if (this.bytesIn <= limit) return true;
    this.tooLarge = true;
    return false;
  }

  // undici's callback-style handler methods: the controller-style ones (onRequestStart, …) make
  // undici wrap every request in two more objects and parse the headers into an object we never
  // read, which costs several microseconds per request on the proxy's hot path.

  onConnect(abort: (err?: Error) => void): void {
    this.abortUpstream = abort;
    // The client may have gone while the request waited for a pooled connection.
    if (this.res.destroyed) abort(new ClientClosedError('client closed'));
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void, statusText: string): boolean {
    // Informational answers (103 Early Hints) are not relayed; the final one follows.
    if (statusCode < 200) return true;
    this.upstreamMs = performance.now() - this.upstreamStart;
    this.status = statusCode;
    this.resumeUpstream = resume;
    this.res.writeHead(statusCode, statusText || undefined, responseHeaders(rawHeaders));
    return true;
  }

  onData(chunk: Buffer): boolean {
    this.bytesOut += chunk.length;
    if (this.res.write(chunk)) return true;
    // The client reads slower than the upstream sends: pause the upstream until the client drains.
    if (!this.draining) {
      this.draining = true;
      this.res.on('drain', () => this.resumeUpstream?.());
    }
    return false;
  }

  onComplete(): void {
    this.res.end();
  }

  onError(err: Error): void {
    if (err instanceof ClientClosedError || this.res.destroyed) return;
    if (this.res.headersSent) {
      // Mid-body failure: cutting the connection is the only way to tell the client it is short.
      this.error = errorName(err);
      this.res.destroy();
      return;
    }
    const code = (err as { code?: unknown }).code;
    let p: ProblemError;
    if (this.tooLarge) p = bodyTooLarge(this.ctx.bodyLimitBytes);
    else if (typeof code === 'string' && TIMEOUT_CODES.has(code)) p = upstreamTimeout(this.ctx.timeoutMs);
    else p = upstreamUnreachable();
    this.reject(p, !this.req.readableEnded);
    this.error = errorName(err);
  }

  private readonly onClose = (): void => {
    const now = performance.now();
    if (!this.res.writableFinished) {
      this.abortUpstream?.(new ClientClosedError('client closed'));
      if (!this.res.headersSent) this.status = CLIENT_CLOSED;
      this.error ??= 'client closed';
    }
    const totalMs = now - this.startedAt;
    const { req } = this;
    this.ctx.metrics.record({
      proxyId: this.proxyId,
      method: req.method as string,
      status: this.status,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      upstreamSeconds: this.upstreamMs < 0 ? NaN : this.upstreamMs / 1000,
      totalSeconds: totalMs / 1000,
    });
    this.ctx.accessLog.write({
      traceId: this.traceId,
      proxyId: this.proxyId,
      method: req.method as string,
      path: redactQuery(req.url as string),
      status: this.status,
      bytesIn: this.bytesIn,
      bytesOut: this.bytesOut,
      upstreamMs: this.upstreamMs < 0 ? null : ms(this.upstreamMs),
      totalMs: ms(totalMs),
      ...(this.error !== undefined ? { error: this.error } : {}),
    });
    this.ctx.onDone();
  };
}

/** Counts a chunked request body and fails it once it passes the limit. */
class ByteLimit extends Transform {
  constructor(
    private readonly limit: number,
    private readonly exchange: Exchange,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    if (this.exchange.countIn(chunk.length, this.limit)) done(null, chunk);
    else done(new Error('request body too large'));
  }
}

function errorName(err: Error): string {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : err.name;
}
