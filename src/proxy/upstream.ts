// The upstream side of the proxy: a keep-alive pool of plain TCP (or TLS) connections to
// UPSTREAM_URL, each with an llhttp response parser. A connection goes back to the pool only
// after a complete response to a completely sent request, with both sides agreeing to keep it
// alive; on any doubt (parse error, close, timeout, an exchange given up half way) it is destroyed.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { SocketWriter } from './socket-writer.js';
import { holdTime, releaseTime, timeMs } from './clock.js';
import { BodyLocator, BY_LENGTH, CONFUSED, CONTINUES, locatableFraming } from './body-locator.js';
import {
  createParser,
  isParseError,
  releaseParser,
  RESPONSE,
  setBodyCallback,
  type HttpParser,
} from './parser/index.js';

/** What an exchange implements to be served by an upstream connection. */
export interface UpstreamUser {
  /** HEAD: the response has headers only, whatever its framing headers say. */
  readonly headRequest: boolean;
  /** The pool assigns a connection; write the request on it. */
  onUpstream(conn: UpstreamConnection): void;
  /** The final (non-1xx) response head. `keepAlive`: the upstream allows reuse after it. */
  onResponseHead(status: number, reason: string, headers: string[], keepAlive: boolean): void;
  /**
   * Body bytes, valid only until `onUpstreamFlush` returns when `inSharedReadBuffer(chunk)` (the
   * next read overwrites them); otherwise the connection does not reuse their memory while the
   * client has not taken everything written (see `onUpstreamFlush`).
   */
  onResponseBody(chunk: Buffer): void;
  /** The response is complete (call `release` or `destroy` on the connection from here). */
  onResponseEnd(): void;
  /**
   * One packet of the upstream was parsed: write out what it produced. Returns whether the client
   * still holds unsent bytes (body bytes handed over may still be read from their buffer).
   */
  onUpstreamFlush(): boolean;
  /** Calls `done` once the client has sent everything written to it so far. */
  whenClientSent(done: () => void): void;
  /** The upstream's socket can take more request body. */
  onUpstreamDrain(): void;
  /**
   * The connection failed before the response was complete. `timeout`: it went silent for too
   * long (or did not connect in time). `retryable`: it was a reused keep-alive connection that
   * failed before sending a byte (it was most likely closed by the upstream while idle).
   */
  onUpstreamError(code: string, timeout: boolean, retryable: boolean): void;
}

/** Settings of the pool. */
export interface UpstreamPoolOptions {
  url: URL;
  connections: number;
  connectTimeoutMs: number;
  /** Longest silence of the upstream while a response is awaited or streams. */
  timeoutMs: number;
}

/** Idle time after which a connection is dropped when the upstream announced none (undici's default). */
const DEFAULT_IDLE_MS = 4000;
/** Margin taken off the upstream's own Keep-Alive timeout, so we never send on a closing socket. */
const IDLE_MARGIN_MS = 2000;

/** Size of one read from an upstream. */
const READ_SIZE = 256 * 1024;
/** Where plain upstream connections read into, until a response's body goes on past a read. */
const READ_BUFFER = Buffer.allocUnsafeSlow(READ_SIZE);

/** Whether `chunk` lies in the shared read buffer (valid only until the next read). */
export const inSharedReadBuffer = (chunk: Buffer): boolean => chunk.buffer === READ_BUFFER.buffer;

/**
 * Read buffers of connections streaming a long body: its bytes go to the client as views of the
 * buffer they were read into, so a buffer is reused only once the client has taken them. Spare
 * ones are kept for the next long body, up to a bound.
 */
const spareBuffers: Buffer[] = [];
const MAX_SPARE_BUFFERS = 8;
/**
 * Own read buffers a connection sets aside while the client holds their bytes: at this many it
 * stops reading until the client has sent everything (a client that keeps a small backlog without
 * ever filling its socket buffer would otherwise make it take a new buffer for every read).
 */
const MAX_LENT = 2;

function takeBuffer(): Buffer {
  return spareBuffers.pop() ?? Buffer.allocUnsafeSlow(READ_SIZE);
}

function spareBuffer(buffer: Buffer): void {
  if (spareBuffers.length < MAX_SPARE_BUFFERS) spareBuffers.push(buffer);
}

/** One keep-alive connection to the upstream. */
export class UpstreamConnection {
  readonly socket: Socket;
  private readonly writer: SocketWriter;
  private readonly parser: HttpParser;
  user: UpstreamUser | null = null;
  /** Whether it served a request before the current one. */
  reused = false;
  connected = false;
  dead = false;
  /** When it started connecting (timeMs()), for the connect timeout. */
  readonly startedAt = timeMs();
  /**
   * Last sign of progress (timeMs()), for the response timeout, which runs once the request was
   * sent (`sent()` sets it).
   */
  lastActive = this.startedAt;
  /** When an idle connection must no longer be used. */
  expiresAt = 0;
  /** The whole request has been written (the response timeout runs from then). */
  requestSent = false;
  /** Reading paused because the client reads slower than the upstream sends. */
  paused = false;
  private received = 0;
  private inExecute = false;
  private releaseAfterExecute = -1;
  private informational = false;
  private headerParts: string[] | null = null;
  private errorCode: string | null = null;
  // Body location (body-locator.ts): the body is handed on as views of the read buffers.
  private readonly locator = new BodyLocator();
  /** The current response's body is located (else llhttp's body callback copies it). */
  private locating = false;
  /** llhttp's body callback delivers the current body, and parses the rest of each read. */
  private copyingBody = false;
  /** llhttp completed the located message (its end is reported once its body is handed on). */
  private messageDone = false;
  /** Heads llhttp completed in the current `execute` (before a located message's end). */
  private headsInCall = 0;
  /** The current exchange's final (non-1xx) head was read. */
  private finalHead = false;
  /** Whether the parser's body callback is set (it starts set, by createParser). */
  private bodyCallbackSet = true;
  /** Body spans ([start, end, …]) of the read being parsed. */
  private spans: number[] = [];
  private readonly lengthOut: number[] = [0];
  /** The client still held unsent bytes after the last flush. */
  private holding = false;
  /** The buffer the next read goes into (plain connections). */
  private readInto: Buffer = READ_BUFFER;
  /** Own read buffers whose bytes the client may not have taken yet. */
  private lent: Buffer[] = [];
  /** Reading stopped until the client has sent what it holds (MAX_LENT). */
  private waitingForClient = false;

  constructor(
    private readonly pool: UpstreamPool,
    url: URL,
  ) {
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    const tls = url.protocol === 'https:';
    const port = url.port === '' ? (tls ? 443 : 80) : Number(url.port);
    this.socket = tls
      ? tlsConnect({
          host,
          port,
          ALPNProtocols: ['http/1.1'],
          ...(isIP(host) === 0 ? { servername: host } : {}),
        })
      : // Reads land in the buffer `nextReadBuffer` names (the shared one, or one of the
        // connection's own while a long body streams) and go straight to the parser: no buffer
        // allocated and no stream machinery per read.
        netConnect({ host, port, onread: { buffer: this.nextReadBuffer, callback: this.onRead } });
    this.socket.setNoDelay(true);
    this.socket.once(tls ? 'secureConnect' : 'connect', this.onConnect);
    if (tls) this.socket.on('data', this.onData);
    this.socket.on('end', this.onEnd);
    this.socket.on('error', this.onSocketError);
    this.socket.on('close', this.onClose);
    this.writer = new SocketWriter(this.socket, this.onDrain);
    this.parser = createParser(RESPONSE, {
      onHeaders: this.onHeaders,
      onHeadersComplete: this.onHeadersComplete,
      onBody: this.onBody,
      onMessageComplete: this.onMessageComplete,
    });
  }

  /** Hands the connection to `user` (the pool calls this). */
  assign(user: UpstreamUser): void {
    this.user = user;
    this.received = 0;
    this.requestSent = false;
    this.locator.reset();
    this.finalHead = false;
    this.locating = false;
    this.copyingBody = false;
    this.messageDone = false;
    this.socket.ref();
    user.onUpstream(this);
  }

  write(data: string | Buffer): boolean {
    return this.writer.write(data);
  }

  /** Marks the request as completely written: from now on the upstream owes an answer. */
  sent(): void {
    this.requestSent = true;
    this.lastActive = timeMs();
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    // Resumed because the client drained: it holds none of the bytes read before.
    this.reclaim();
    this.lastActive = timeMs();
    this.socket.resume();
  }

  /**
   * Gives the connection back after a complete exchange: kept for the next request when
   * `reusable`, else closed. `keepAliveMs`: the upstream's idle timeout (-1 when not announced).
   */
  release(reusable: boolean, keepAliveMs: number): void {
    this.user = null;
    this.forgetLent();
    if (this.paused) this.resume();
    const idleMs = keepAliveMs < 0 ? DEFAULT_IDLE_MS : keepAliveMs - IDLE_MARGIN_MS;
    if (!reusable || idleMs <= 0 || this.dead) {
      this.destroy();
      return;
    }
    this.expiresAt = timeMs() + idleMs;
    this.reused = true;
    // Bytes after the response in the same packet are parsed before the next exchange may start.
    if (this.inExecute) this.releaseAfterExecute = 1;
    else this.pool.release(this);
  }

  /** Closes it for good (the pool forgets it when the socket closes). */
  destroy(): void {
    this.user = null;
    this.forgetLent();
    this.dead = true;
    this.socket.destroy();
  }

  /** Fails the current exchange and closes the connection. */
  fail(code: string, timeout = false): void {
    const user = this.user;
    const retryable = this.reused && this.received === 0 && !timeout;
    this.destroy();
    user?.onUpstreamError(code, timeout, retryable);
  }

  private readonly onConnect = (): void => {
    this.connected = true;
    this.lastActive = timeMs();
  };

  private readonly nextReadBuffer = (): Buffer => this.readInto;

  private readonly onRead = (length: number, buffer: Buffer): boolean => {
    const own = buffer !== READ_BUFFER;
    this.onData(buffer.subarray(0, length), own);
    // A body going on past this read is read into buffers of the connection's own, so its bytes
    // can go to the client as they are; one still being written to the client is not reused.
    const streaming = this.user !== null && this.locating && !this.dead;
    if (own) {
      if (this.holding) {
        // Dropped rather than kept when the exchange ended: its client is no longer tracked.
        if (this.user !== null) {
          this.lent.push(buffer);
          if (this.lent.length >= MAX_LENT && !this.waitingForClient) this.waitForClient(this.user);
        }
      } else if (streaming) return true;
      else spareBuffer(buffer);
    }
    this.readInto = streaming ? takeBuffer() : READ_BUFFER;
    return true;
  };

  private waitForClient(user: UpstreamUser): void {
    this.waitingForClient = true;
    this.pause();
    user.whenClientSent(() => {
      this.waitingForClient = false;
      // Sent all: resuming reclaims the lent buffers.
      if (this.user === user) this.resume();
    });
  }

  /** The client took everything written: the lent buffers can be read into again. */
  private reclaim(): void {
    // Setting an array's length is a call into the runtime even when it is already 0.
    if (this.lent.length === 0) return;
    for (const b of this.lent) spareBuffer(b);
    this.lent.length = 0;
  }

  /**
   * An empty spans array: a new one when the last was used. Shrinking an array (`length = 0`) is a
   * call into V8's runtime; a small new array is an allocation in the young generation.
   */
  private emptySpans(): number[] {
    if (this.spans.length !== 0) this.spans = [];
    return this.spans;
  }

  /** The exchange ends: buffers it may still be writing are left to the garbage collector. */
  private forgetLent(): void {
    if (this.lent.length > 0) this.lent = [];
  }

  /**
   * `own`: `data` is in a read buffer of the connection's own, reused once the client has taken
   * its bytes (a TLS connection's chunks are fresh each time, the shared buffer is copied from).
   */
  private readonly onData = (data: Buffer, own = false): void => {
    holdTime();
    try {
      this.lastActive = timeMs();
      if (this.user === null) {
        // An idle connection must be silent: anything else means the framing is off.
        this.destroy();
        return;
      }
      this.received += data.length;
      this.inExecute = true;
      const parsed = this.parse(data, own);
      this.inExecute = false;
      if (!parsed) return;
      if (this.user !== null) {
        this.holding = this.user.onUpstreamFlush();
        if (!this.holding) this.reclaim();
      }
      if (this.releaseAfterExecute === 1) {
        this.releaseAfterExecute = -1;
        if (!this.dead) this.pool.release(this);
      }
    } finally {
      releaseTime();
    }
  };

  /**
   * Runs llhttp over `data` piece by piece: a head up to where the locator ends it, a located body
   * up to its end (handing on views of its bytes once llhttp accepted them), or, for a body llhttp
   * delivers itself, the rest. Returns false when the connection failed.
   */
  private parse(data: Buffer, own: boolean): boolean {
    const n = data.length;
    let pos = 0;
    while (pos < n) {
      if (this.dead) return false;
      if (this.user === null) {
        // Bytes after the complete response: the framing is off.
        this.fail('UPSTREAM_UNEXPECTED_RESPONSE');
        return false;
      }
      if (this.copyingBody) return this.execute(data, pos, n);
      if (this.locating) {
        const spans = this.emptySpans();
        const end = this.locator.scanBody(data, pos, spans);
        const stop = end < 0 ? n : end;
        if (!this.execute(data, pos, stop)) return false;
        if (end === CONFUSED || this.messageDone !== end >= 0) {
          // llhttp accepted bytes the locator read differently: trust neither.
          this.fail('UPSTREAM_FRAMING');
          return false;
        }
        const user = this.user;
        for (let i = 0; i < spans.length; i += 2) user.onResponseBody(data.subarray(spans[i], spans[i + 1]));
        if (end >= 0) this.endLocated(own);
        pos = stop;
        continue;
      }
      return this.parseHead(data, pos, own);
    }
    return !this.dead;
  }

  /**
   * From a head on, llhttp reads the rest of the read in one call: the head and, without a body
   * callback when the body is located, the body. The body is located after the call, from where
   * the heads completed in it end: at successive CRLFCRLFs (1xx answers have no body).
   */
  private parseHead(data: Buffer, pos: number, own: boolean): boolean {
    const n = data.length;
    this.headsInCall = 0;
    const piece = pos === 0 ? data : data.subarray(pos);
    const r = this.parser.execute(piece);
    if (this.dead) return false;
    const error = isParseError(r) ? r : null;
    let at = pos;
    // Heads are located only while a body may still need it (not after a final head whose body
    // llhttp delivers, or that has none: the usual small answer).
    if (!this.finalHead || this.locating) {
      for (let k = 0; k < this.headsInCall && at >= 0; k++) at = this.locator.headEnd(data, at);
      // No head completed: the locator must not see one either (and keeps a split CRLFCRLF's start).
      if (this.headsInCall === 0 && error === null && this.locator.headEnd(data, pos) >= 0) at = -1;
      if (at < 0 && error === null) {
        this.fail('UPSTREAM_FRAMING');
        return false;
      }
    }
    if (!this.locating) {
      // No body, or one llhttp's callback delivered: nothing to locate.
      if (error !== null) this.fail(error.code);
      else if (r !== piece.length) this.fail('HPE_UPSTREAM_UPGRADE');
      return !this.dead;
    }
    const spans = this.emptySpans();
    const end = at < 0 ? CONFUSED : this.locator.scanBody(data, at, spans);
    // Where llhttp stopped: the whole read, or the error's position.
    const parsedTo = error === null ? n : pos + (error.bytesParsed ?? 0);
    const complete = this.messageDone && end >= 0 && end <= parsedTo;
    if (!complete && (error !== null || end !== CONTINUES || this.messageDone)) {
      this.fail(error?.code ?? 'UPSTREAM_FRAMING');
      return false;
    }
    const user = this.user;
    if (user === null) return false;
    for (let i = 0; i < spans.length; i += 2) user.onResponseBody(data.subarray(spans[i], spans[i + 1]));
    if (!complete) return true;
    this.endLocated(own);
    if (end < n) {
      // Bytes after the complete answer (llhttp read them too): this connection is done.
      this.destroy();
      return false;
    }
    return !this.dead;
  }

  /** llhttp over data[from, to): false (the connection failed) on a parse error or upgrade. */
  private execute(data: Buffer, from: number, to: number): boolean {
    const piece = from === 0 && to === data.length ? data : data.subarray(from, to);
    const r = this.parser.execute(piece);
    if (isParseError(r)) {
      this.fail(r.code);
      return false;
    }
    if (r !== piece.length && !this.dead) {
      // The parser stopped early (an upgrade): nothing after it can be trusted.
      this.fail('HPE_UPSTREAM_UPGRADE');
      return false;
    }
    return !this.dead;
  }

  /** The located body ended: its bytes were handed on, the response is complete. */
  private endLocated(own: boolean): void {
    this.locating = false;
    this.messageDone = false;
    const user = this.user;
    if (user === null) return;
    // Whether the client still holds bytes of this read's buffer decides if it is reused.
    if (own) this.holding = user.onUpstreamFlush();
    user.onResponseEnd();
  }

  private readonly onHeaders = (headers: string[]): void => {
    // Trailers of the chunked body being read: they end it, are not relayed, and are no part of
    // the next response's head (which may be another client's on this pooled connection).
    if (this.locating || this.copyingBody) return;
    this.headerParts = this.headerParts === null ? headers : this.headerParts.concat(headers);
  };

  private readonly onHeadersComplete = (
    _major: number,
    _minor: number,
    headers: string[] | undefined,
    _method: number,
    _url: string,
    status: number,
    reason: string,
    _upgrade: boolean,
    keepAlive: boolean,
  ): number => {
    let raw = headers ?? [];
    if (this.headerParts !== null) {
      raw = this.headerParts.concat(raw);
      this.headerParts = null;
    }
    // After a located answer completed in the same call: bytes after the answer, refused once
    // the call returns.
    if (this.messageDone) return 0;
    this.headsInCall++;
    const user = this.user;
    if (user === null || status === 101) {
      // A response nobody asked for, or a protocol switch we never requested.
      this.fail(status === 101 ? 'UPSTREAM_SWITCHED_PROTOCOLS' : 'UPSTREAM_UNEXPECTED_RESPONSE');
      return 0;
    }
    if (status < 200) {
      // 1xx (103 Early Hints, a stray 100 Continue): not relayed; the final answer follows.
      this.informational = true;
      return 0;
    }
    this.finalHead = true;
    user.onResponseHead(status, reason, raw, keepAlive);
    // 1 tells llhttp the response has no body (the answer to a HEAD).
    if (user.headRequest) return 1;
    if (status !== 204 && status !== 304) {
      const framing = locatableFraming(raw, this.lengthOut);
      const length = this.lengthOut[0] as number;
      // Located whatever its size: llhttp's body callback would copy even a small body into a
      // Buffer of its own (an allocation and a call into JavaScript per answer).
      if (framing === 0) {
        this.copyingBody = true;
        if (!this.bodyCallbackSet) setBodyCallback(this.parser, this.onBody);
        this.bodyCallbackSet = true;
      } else if (framing !== BY_LENGTH || length > 0) {
        this.locating = true;
        this.locator.startBody(framing, length);
        // Set only when it changes: a store on the binding's object costs more than a field.
        if (this.bodyCallbackSet) setBodyCallback(this.parser, null);
        this.bodyCallbackSet = false;
      }
    }
    return 0;
  };

  private readonly onBody = (chunk: Buffer): void => {
    this.user?.onResponseBody(chunk);
  };

  private readonly onMessageComplete = (): void => {
    if (this.informational) {
      this.informational = false;
      return;
    }
    if (this.locating) {
      // Reported once the body's bytes are handed on (after execute returns).
      this.messageDone = true;
      return;
    }
    if (this.messageDone) return;
    this.copyingBody = false;
    this.user?.onResponseEnd();
  };

  private readonly onDrain = (): void => {
    this.user?.onUpstreamDrain();
  };

  private readonly onEnd = (): void => {
    // The upstream closed its side: that completes a response delimited by the close, or
    // cuts one short.
    this.dead = true;
    if (this.user !== null) {
      this.inExecute = true;
      const r = this.parser.finish();
      this.inExecute = false;
      if (isParseError(r)) {
        this.fail(r.code);
        return;
      }
      this.releaseAfterExecute = -1;
      // A body delimited by the close: llhttp completed it.
      if (this.locating && this.messageDone) this.endLocated(false);
      if (this.user !== null) this.user.onUpstreamFlush();
    }
    if (this.user !== null) this.fail('UPSTREAM_CLOSED');
    else this.socket.destroy();
  };

  private readonly onSocketError = (err: Error): void => {
    const code = (err as { code?: unknown }).code;
    this.errorCode = typeof code === 'string' ? code : err.name;
  };

  private readonly onClose = (): void => {
    this.dead = true;
    if (this.user !== null) this.fail(this.errorCode ?? 'UPSTREAM_CLOSED');
    releaseParser(this.parser);
    this.pool.forget(this);
  };
}

/** The keep-alive pool: at most `connections` connections, idle ones reused most recent first. */
export class UpstreamPool {
  private readonly idle: UpstreamConnection[] = [];
  private readonly all = new Set<UpstreamConnection>();
  private readonly waiting: UpstreamUser[] = [];
  private readonly sweeper: NodeJS.Timeout;
  private closing = false;
  private onEmpty: (() => void) | null = null;

  constructor(private readonly options: UpstreamPoolOptions) {
    // One timer for every connection's timeouts instead of one per request.
    const every = Math.min(
      1000,
      Math.max(10, Math.floor(Math.min(options.timeoutMs, options.connectTimeoutMs) / 10)),
    );
    this.sweeper = setInterval(this.sweep, every);
    this.sweeper.unref();
  }

  /** Gets `user` a connection: an idle one, a new one, or the next one freed. */
  acquire(user: UpstreamUser): void {
    if (this.closing) {
      user.onUpstreamError('PROXY_CLOSING', false, false);
      return;
    }
    const now = timeMs();
    let conn = this.idle.pop();
    while (conn !== undefined && (conn.dead || conn.expiresAt <= now)) {
      conn.destroy();
      conn = this.idle.pop();
    }
    if (conn !== undefined) {
      conn.assign(user);
      return;
    }
    if (this.all.size < this.options.connections) {
      const fresh = new UpstreamConnection(this, this.options.url);
      this.all.add(fresh);
      fresh.assign(user);
      return;
    }
    this.waiting.push(user);
  }

  /** Withdraws a user still waiting for a connection (its client went away). */
  cancel(user: UpstreamUser): void {
    const i = this.waiting.indexOf(user);
    if (i >= 0) this.waiting.splice(i, 1);
  }

  /** A connection finished an exchange and may be reused. */
  release(conn: UpstreamConnection): void {
    if (this.closing) {
      conn.destroy();
      return;
    }
    const next = this.waiting.shift();
    if (next !== undefined) {
      conn.assign(next);
      return;
    }
    conn.socket.unref();
    this.idle.push(conn);
  }

  /** A connection closed: forget it, and open another for whoever waits. */
  forget(conn: UpstreamConnection): void {
    if (!this.all.delete(conn)) return;
    const i = this.idle.indexOf(conn);
    if (i >= 0) this.idle.splice(i, 1);
    if (this.all.size === 0 && this.onEmpty !== null) this.onEmpty();
    const next = this.waiting.shift();
    if (next !== undefined) this.acquire(next);
  }

  /** Closes idle connections now and busy ones when their exchange ends; resolves when all are closed. */
  close(): Promise<void> {
    this.closing = true;
    for (const conn of this.idle.splice(0)) conn.destroy();
    for (const user of this.waiting.splice(0)) user.onUpstreamError('PROXY_CLOSING', false, false);
    return this.whenEmpty();
  }

  /** Closes every connection at once. */
  destroy(): Promise<void> {
    this.closing = true;
    for (const user of this.waiting.splice(0)) user.onUpstreamError('PROXY_CLOSING', false, false);
    for (const conn of [...this.all]) conn.fail('PROXY_CLOSING');
    return this.whenEmpty();
  }

  private whenEmpty(): Promise<void> {
    clearInterval(this.sweeper);
    if (this.all.size === 0) return Promise.resolve();
    return new Promise((resolve) => (this.onEmpty = resolve));
  }

  private readonly sweep = (): void => {
    const now = timeMs();
    const { connectTimeoutMs, timeoutMs } = this.options;
    for (const conn of this.all) {
      if (conn.user === null) {
        if (conn.expiresAt <= now && !conn.dead) conn.destroy();
      } else if (!conn.connected) {
        if (now - conn.startedAt > connectTimeoutMs) conn.fail('CONNECT_TIMEOUT', true);
      } else if (conn.requestSent && !conn.paused && now - conn.lastActive > timeoutMs) {
        conn.fail('UPSTREAM_TIMEOUT', true);
      }
    }
  };
}
