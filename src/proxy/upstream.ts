// The upstream side of the proxy: a keep-alive pool of plain TCP (or TLS) connections to
// UPSTREAM_URL, each with node's own llhttp response parser. A connection goes back to the pool only
// after a complete response to a completely sent request, with both sides agreeing to keep it
// alive; on any doubt (parse error, close, timeout, an exchange given up half way) it is destroyed.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { createParser, isParseError, releaseParser, RESPONSE, type HttpParser } from './llhttp.js';

/** What an exchange implements to be served by an upstream connection. */
export interface UpstreamUser {
  /** HEAD: the response has headers only, whatever its framing headers say. */
  readonly headRequest: boolean;
  /** The pool assigns a connection; write the request on it. */
  onUpstream(conn: UpstreamConnection): void;
  /** The final (non-1xx) response head. `keepAlive`: the upstream allows reuse after it. */
  onResponseHead(status: number, reason: string, headers: string[], keepAlive: boolean): void;
  onResponseBody(chunk: Buffer): void;
  /** The response is complete (call `release` or `destroy` on the connection from here). */
  onResponseEnd(): void;
  /** One packet of the upstream was parsed: write out what it produced. */
  onUpstreamFlush(): void;
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

/** Where every plain upstream connection reads into (each read is parsed before the next). */
const READ_BUFFER = Buffer.allocUnsafeSlow(256 * 1024);

/** One keep-alive connection to the upstream. */
export class UpstreamConnection {
  readonly socket: Socket;
  private readonly parser: HttpParser;
  user: UpstreamUser | null = null;
  /** Whether it served a request before the current one. */
  reused = false;
  connected = false;
  dead = false;
  /** When it started connecting (ms since epoch), for the connect timeout. */
  readonly startedAt = Date.now();
  /** Last sign of progress (ms since epoch), for the response timeout. */
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
      : // Reads land in one shared buffer and go straight to the parser, which copies what it
        // keeps: no buffer allocated and no stream machinery per read.
        netConnect({ host, port, onread: { buffer: READ_BUFFER, callback: this.onRead } });
    this.socket.setNoDelay(true);
    this.socket.once(tls ? 'secureConnect' : 'connect', this.onConnect);
    if (tls) this.socket.on('data', this.onData);
    this.socket.on('end', this.onEnd);
    this.socket.on('error', this.onSocketError);
    this.socket.on('close', this.onClose);
    this.socket.on('drain', this.onDrain);
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
    this.lastActive = Date.now();
    this.socket.ref();
    user.onUpstream(this);
  }

  write(data: string | Buffer): boolean {
    this.lastActive = Date.now();
    return typeof data === 'string' ? this.socket.write(data, 'latin1') : this.socket.write(data);
  }

  /** Marks the request as completely written: from now on the upstream owes an answer. */
  sent(): void {
    this.requestSent = true;
    this.lastActive = Date.now();
  }

  pause(): void {
    if (this.paused) return;
    this.paused = true;
    this.socket.pause();
  }

  resume(): void {
    if (!this.paused) return;
    this.paused = false;
    this.lastActive = Date.now();
    this.socket.resume();
  }

  /**
   * Gives the connection back after a complete exchange: kept for the next request when
   * `reusable`, else closed. `keepAliveMs`: the upstream's idle timeout (-1 when not announced).
   */
  release(reusable: boolean, keepAliveMs: number): void {
    this.user = null;
    if (this.paused) this.resume();
    const idleMs = keepAliveMs < 0 ? DEFAULT_IDLE_MS : keepAliveMs - IDLE_MARGIN_MS;
    if (!reusable || idleMs <= 0 || this.dead) {
      this.destroy();
      return;
    }
    this.expiresAt = Date.now() + idleMs;
    this.reused = true;
    // Bytes after the response in the same packet are parsed before the next exchange may start.
    if (this.inExecute) this.releaseAfterExecute = 1;
    else this.pool.release(this);
  }

  /** Closes it for good (the pool forgets it when the socket closes). */
  destroy(): void {
    this.user = null;
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
    this.lastActive = Date.now();
  };

  private readonly onRead = (length: number, buffer: Buffer): boolean => {
    this.onData(buffer.subarray(0, length));
    return true;
  };

  private readonly onData = (data: Buffer): void => {
    this.lastActive = Date.now();
    const user = this.user;
    if (user === null) {
      // An idle connection must be silent: anything else means the framing is off.
      this.destroy();
      return;
    }
    this.received += data.length;
    this.inExecute = true;
    const r = this.parser.execute(data);
    this.inExecute = false;
    if (isParseError(r)) {
      this.fail(r.code);
      return;
    }
    if (r !== data.length && !this.dead) {
      // The parser stopped early (an upgrade): nothing after it can be trusted.
      this.fail('HPE_UPSTREAM_UPGRADE');
      return;
    }
    if (this.user !== null) this.user.onUpstreamFlush();
    if (this.releaseAfterExecute === 1) {
      this.releaseAfterExecute = -1;
      if (!this.dead) this.pool.release(this);
    }
  };

  private readonly onHeaders = (headers: string[]): void => {
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
    user.onResponseHead(status, reason, raw, keepAlive);
    // 1 tells llhttp the response has no body (the answer to a HEAD).
    return user.headRequest ? 1 : 0;
  };

  private readonly onBody = (chunk: Buffer): void => {
    this.user?.onResponseBody(chunk);
  };

  private readonly onMessageComplete = (): void => {
    if (this.informational) {
      this.informational = false;
      return;
    }
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
    const now = Date.now();
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
    const now = Date.now();
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
