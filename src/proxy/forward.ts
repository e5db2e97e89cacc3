// One request's life in the proxy, through the phases of exchange-phases.ts. The exchange is the
// bookkeeping (exchange-record.ts), the response's output (response-out.ts, both extended here) and
// the user of an upstream connection, so a forwarded request allocates one object of ours. Bodies
// stream both ways with backpressure: a full upstream socket pauses reading from the client, a full
// client socket pauses reading from the upstream.
import type { ProblemError } from '../errors.js';
import type { AccessLog } from './access-log.js';
import type { Applicant } from './admission.js';
import {
  PAUSED_FOR_HOLD,
  PAUSED_FOR_UPSTREAM,
  type ClientSide,
  type ConnectionExchange,
  type ConnectionMemo,
} from './client-side.js';
import { timeMs } from './clock.js';
import { EXCHANGE_MOVES, HOLDS_UPSTREAM, type BodySink, type ExchangePhase } from './exchange-phases.js';
import { CLIENT_CLOSED } from './exchange-record.js';
import { scanResponseHeaders, type RequestHeaderScan } from './headers.js';
import type { ProxyMetrics } from './metrics.js';
import { makeMove } from './phases.js';
import { bodyTooLarge, renderProblem, upstreamTimeout, upstreamUnreachable } from './problems.js';
import { wholeRequest, writeBodyChunk, writeHeadAndHeld } from './request-out.js';
import { ResponseOutput } from './response-out.js';
import type { UpstreamLink, UpstreamUser } from './upstream-user.js';
import {
  connectionLines,
  headerLines,
  httpDate,
  LAST_CHUNK,
  statusLine,
  upstreamRequestHead,
} from './wire.js';

/** What every exchange shares: the upstream, the limits, and where results are reported. */
export interface ForwardContext {
  /** Where exchanges get upstream connections (the keep-alive pool). */
  pool: { acquire(user: UpstreamUser): void; cancel(user: UpstreamUser): void };
  /** Path prefix of UPSTREAM_URL ('' when it has none). */
  basePath: string;
  /** The Host header sent upstream (UPSTREAM_URL's host[:port]). */
  upstreamHost: string;
  timeoutMs: number;
  bodyLimitBytes: number;
  /** Keep-alive timeout announced to clients, in seconds. */
  keepAliveSeconds: number;
  metrics: Pick<ProxyMetrics, 'record'>;
  accessLog: Pick<AccessLog, 'write'>;
  /** Whether the proxy is shutting down (responses then close their connection). */
  closing: () => boolean;
}

/** Request bodies of a declared length up to this many bytes are read whole before forwarding. */
const SMALL_BODY = 16 * 1024;
/** Request body held (waiting for an upstream connection) before reading from the client pauses. */
const HOLD_LIMIT = 64 * 1024;
const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS', 'TRACE']);

/** A request in flight through the proxy. */
export class Exchange extends ResponseOutput implements UpstreamUser, ConnectionExchange, Applicant {
  /** Where it is in its life (exchange-phases.ts lists the moves). */
  phase: ExchangePhase = 'queued';
  /** The response ends the client connection (Connection: close). */
  closeAfter: boolean;
  /** The request message has been read completely. */
  requestEnded = false;
  readonly headRequest: boolean;
  /** Ended by a malformed request (its status is the connection's answer, not 499). */
  private clientFault = false;
  // Request side.
  private sink: BodySink = 'hold';
  private chunkedIn = false;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Set from `connected` until the exchange lets go of it. */
  private upstream: UpstreamLink | null = null;
  private requestWritten = false;
  /** The whole request as written, kept for one retry on a fresh connection. */
  private retryData: string | null = null;
  private retried = false;
  // Response side.
  private noBody = false;
  private upstreamKeepAlive = false;
  private keepAliveMs = -1;
  private clientBlocked = false;

  constructor(
    private readonly ctx: ForwardContext,
    private readonly conn: ClientSide,
    method: string,
    url: string,
    readonly scan: RequestHeaderScan,
    traceId: string,
    private readonly http10: boolean,
    keepAlive: boolean,
  ) {
    super(method, url, traceId);
    this.closeAfter = !keepAlive;
    this.headRequest = method === 'HEAD';
  }

  /** What earlier requests on the same client connection proved. */
  get memo(): ConnectionMemo {
    return this.conn.memo;
  }

  /** Logged and counted; nothing more happens. */
  get done(): boolean {
    return this.phase === 'done';
  }

  /** Its turn came: the admission checks run on it (from now on it will be logged). */
  begin(): void {
    makeMove(this, EXCHANGE_MOVES.begin);
  }

  /** Answers with one of the proxy's own problems instead of forwarding. */
  reject(err: ProblemError, unreadBody: boolean): void {
    this.status = err.status;
    this.error = err.title;
    // A body that was never going to be forwarded is not counted as received.
    if (this.phase === 'checking') this.bytesIn = 0;
    this.stopForwarding();
    if (this.phase === 'done') return;
    if (!makeMove(this, EXCHANGE_MOVES.respond)) {
      // Response bytes went out already: the client can only be told by cutting the connection.
      this.cut();
      return;
    }
    // Reading an unwanted large body just to keep the connection is worse than reconnecting.
    if (unreadBody) this.closeAfter = true;
    const keepAlive = !this.closeAfter && !this.ctx.closing();
    if (!keepAlive) this.closeAfter = true;
    const { data, bodyLength } = renderProblem(err, this.traceId, keepAlive, this.ctx.keepAliveSeconds);
    this.bytesOut = bodyLength;
    this.conn.write(data);
    this.finish();
  }

  /** Sends the request upstream (the checks passed). */
  forward(): void {
    const { scan } = this;
    if (scan.chunked) {
      this.chunkedIn = true;
      if (this.bytesIn > this.ctx.bodyLimitBytes) {
        this.tooLarge();
        return;
      }
    } else if (scan.contentLength > 0) this.bytesIn = scan.contentLength;
    if (!scan.chunked && scan.contentLength > 0 && scan.contentLength <= SMALL_BODY && !this.requestEnded) {
      // A small body (usually in the same packet as its headers) is read whole and sent with the
      // request's headers in one write.
      makeMove(this, EXCHANGE_MOVES.collect);
      return;
    }
    this.dispatch();
  }

  private dispatch(): void {
    if (!makeMove(this, EXCHANGE_MOVES.dispatch)) return;
    this.upstreamStart = timeMs();
    this.ctx.pool.acquire(this);
  }

  // Request body, as the client connection's parser delivers it.

  onRequestBody(chunk: Buffer): void {
    if (this.sink === 'discard') return;
    if (this.scan.chunked) {
      // Counted from the first byte (it may arrive before the checks are done); the limit is
      // enforced once the exchange has started.
      this.bytesIn += chunk.length;
      if (this.phase !== 'queued' && this.bytesIn > this.ctx.bodyLimitBytes) {
        this.tooLarge();
        return;
      }
    }
    if (this.sink === 'upstream') {
      this.writeBody(chunk);
      return;
    }
    this.pending.push(chunk);
    this.pendingBytes += chunk.length;
    if (this.pendingBytes > HOLD_LIMIT) this.conn.pauseReading(PAUSED_FOR_HOLD);
  }

  onRequestEnd(): void {
    this.requestEnded = true;
    if (this.sink === 'discard') return;
    if (this.phase === 'collecting') {
      this.dispatch();
      return;
    }
    const up = this.upstream;
    if (this.sink === 'upstream' && up !== null) {
      if (this.chunkedIn) up.write(LAST_CHUNK);
      this.requestSent(up);
    }
  }

  onRequestWhole(body: Buffer): void {
    // A view may be held for a moment (copied below if it outlives this call), never queued on
    // the upstream's socket.
    this.onRequestBody(this.sink === 'upstream' ? Buffer.from(body) : body);
    this.onRequestEnd();
    // Still held (waiting for the checks or an upstream connection): the next read reuses the buffer.
    const last = this.pending.length - 1;
    if (last >= 0 && this.pending[last] === body) this.pending[last] = Buffer.from(body);
  }

  private writeBody(chunk: Buffer): void {
    // The upstream takes the body slower than the client sends it.
    if (!writeBodyChunk(this.upstream as UpstreamLink, chunk, this.chunkedIn))
      this.conn.pauseReading(PAUSED_FOR_UPSTREAM);
  }

  private tooLarge(): void {
    if (this.phase === 'responding') {
      this.error = 'request body too large';
      this.stopForwarding();
      this.cut();
      return;
    }
    this.reject(bodyTooLarge(this.ctx.bodyLimitBytes), true);
  }

  // The upstream connection's side (UpstreamUser).

  onUpstream(up: UpstreamLink): void {
    if (this.sink === 'discard' || !makeMove(this, EXCHANGE_MOVES.connected)) {
      up.release(false, -1);
      return;
    }
    this.upstream = up;
    if (this.retried && this.retryData !== null) {
      const data = this.retryData;
      this.retryData = null;
      up.write(data);
      this.requestSent(up);
      return;
    }
    const { scan, ctx } = this;
    const target = ctx.basePath + this.url;
    const head = upstreamRequestHead(this.method, target, ctx.upstreamHost, scan.forward, this.chunkedIn);
    const hasBody = this.chunkedIn || scan.contentLength > 0;
    const { pending, pendingBytes } = this;
    if (pending.length > 0) {
      this.pending = [];
      this.pendingBytes = 0;
    }
    this.sink = 'upstream';
    if (!hasBody || (this.requestEnded && !this.chunkedIn && pendingBytes <= SMALL_BODY)) {
      // The whole request in one write, kept for a retry if it is idempotent.
      const data = wholeRequest(head, pending);
      if (IDEMPOTENT.has(this.method)) this.retryData = data;
      up.write(data);
      if (this.requestEnded || !hasBody) this.requestSent(up);
      return;
    }
    writeHeadAndHeld(up, head, pending, this.chunkedIn, this.requestEnded);
    if (this.requestEnded) this.requestSent(up);
    this.conn.resumeReading(PAUSED_FOR_HOLD);
  }

  private requestSent(up: UpstreamLink): void {
    this.requestWritten = true;
    up.sent();
  }

  onResponseHead(status: number, reason: string, headers: string[], upstreamKeepAlive: boolean): void {
    if (!makeMove(this, EXCHANGE_MOVES.respond)) return;
    this.retryData = null;
    this.upstreamMs = timeMs() - this.upstreamStart;
    this.status = status;
    this.upstreamKeepAlive = upstreamKeepAlive;
    const r = scanResponseHeaders(headers);
    this.keepAliveMs = r.keepAliveMs;
    this.noBody = this.headRequest || status === 204 || status === 304;
    if (!this.noBody && !r.hasContentLength) {
      // Chunked (or delimited by the upstream's close): re-framed as chunked for an HTTP/1.1
      // client; an HTTP/1.0 client gets the body up to the close of its connection.
      if (this.http10) this.closeAfter = true;
      else this.chunkedOut = true;
    }
    const keepAlive = !this.closeAfter && !this.ctx.closing();
    if (!keepAlive) this.closeAfter = true;
    let head = statusLine(status, reason) + headerLines(r.forward);
    if (!r.hasDate) head += `Date: ${httpDate()}\r\n`;
    if (!r.hasRequestId) head += `X-Request-Id: ${this.traceId}\r\n`;
    head += connectionLines(keepAlive, this.ctx.keepAliveSeconds);
    head += this.chunkedOut ? 'Transfer-Encoding: chunked\r\n\r\n' : '\r\n';
    this.gatherText(head);
  }

  onResponseBody(chunk: Buffer): void {
    if (!this.noBody && this.phase !== 'done') this.gatherBody(chunk);
  }

  onResponseEnd(): void {
    if (this.phase === 'done') return;
    this.gatherEnd();
    this.flush(true);
    const up = this.upstream;
    this.upstream = null;
    // Reused only if the request went out whole and both ends keep the connection.
    up?.release(this.upstreamKeepAlive && this.requestWritten, this.keepAliveMs);
    if (!this.requestEnded) {
      // The upstream answered before the whole body arrived: the rest is read and dropped.
      this.sink = 'discard';
      this.pending = [];
      this.conn.resumeReading(PAUSED_FOR_HOLD | PAUSED_FOR_UPSTREAM);
    }
    this.finish();
  }

  onUpstreamFlush(): boolean {
    return this.flush(false);
  }

  /** Writes out the response bytes gathered; `last`: they end the response. */
  private flush(last: boolean): boolean {
    const ok = this.writeGathered(this.conn);
    if (ok === false && !last) {
      // The client reads slower than the upstream sends: pause the upstream until it drains.
      this.clientBlocked = true;
      this.upstream?.pause();
    }
    return this.conn.holdsWrites;
  }

  whenClientSent(done: () => void): void {
    this.conn.afterWrites(done);
  }

  /** The client's socket drained. */
  onClientDrain(): void {
    if (!this.clientBlocked) return;
    this.clientBlocked = false;
    this.upstream?.resume();
  }

  onUpstreamDrain(): void {
    this.conn.resumeReading(PAUSED_FOR_UPSTREAM);
  }

  onUpstreamError(code: string, timeout: boolean, retryable: boolean): void {
    this.upstream = null;
    if (this.phase === 'done') return;
    if (retryable && this.retryData !== null && !this.retried && makeMove(this, EXCHANGE_MOVES.retry)) {
      // A reused connection closed by the upstream while idle: the request never reached it.
      this.retried = true;
      this.ctx.pool.acquire(this);
      return;
    }
    if (this.phase === 'responding') {
      // Mid-body failure: cutting the connection is the only way to tell the client it is short.
      this.error = code;
      this.cut();
      return;
    }
    this.reject(timeout ? upstreamTimeout(this.ctx.timeoutMs) : upstreamUnreachable(), !this.requestEnded);
    this.error = code;
  }

  /** Whether response bytes were produced (a problem can no longer be sent instead). */
  get hasResponded(): boolean {
    return this.phase === 'responding';
  }

  /** The request turned out malformed after its head: the connection answers `status` and closes. */
  clientError(status: number, code: string): void {
    if (this.phase === 'done') return;
    if (this.phase !== 'responding') this.status = status;
    this.clientFault = true;
    this.closeAfter = true;
    this.error = code;
    this.stopForwarding();
    this.finish();
  }

  /** The client connection closed: give up the upstream side and log what happened. */
  abort(): void {
    if (this.phase === 'done' || this.phase === 'queued') return;
    if (this.phase !== 'responding' && !this.clientFault) this.status = CLIENT_CLOSED;
    this.error ??= 'client closed';
    this.stopForwarding();
    this.finish();
  }

  /** Ends the client connection abruptly (a response that cannot be completed). */
  private cut(): void {
    this.conn.destroy();
    this.abort();
  }

  /** Drops the upstream side: a waiting request is withdrawn, a connection in use destroyed. */
  private stopForwarding(): void {
    this.sink = 'discard';
    this.pending = [];
    this.pendingBytes = 0;
    this.conn.resumeReading(PAUSED_FOR_HOLD | PAUSED_FOR_UPSTREAM);
    const held = HOLDS_UPSTREAM[this.phase];
    if (held === 'poolQueue') this.ctx.pool.cancel(this);
    else if (held === 'connection') {
      const up = this.upstream;
      this.upstream = null;
      up?.destroy();
    }
  }

  private finish(): void {
    if (!makeMove(this, EXCHANGE_MOVES.finish)) return;
    this.report(this.ctx.metrics, this.ctx.accessLog);
    this.conn.exchangeDone(this);
  }
}
