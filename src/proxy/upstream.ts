// One keep-alive connection to UPSTREAM_URL (plain TCP or TLS), with its response reader. It goes
// back to the pool only after a complete response to a completely sent request, with both sides
// agreeing to keep it alive; on any doubt (parse error, close, timeout, an exchange given up half
// way) it is destroyed.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { holdTime, releaseTime, timeMs } from './clock.js';
import { makeMove, type MoveRule } from './phases.js';
import { SHARED_READ_BUFFER, spareReadBuffer, takeReadBuffer } from './read-buffers.js';
import { SocketWriter } from './socket-writer.js';
import { ResponseReader, type ReaderOwner } from './upstream-response.js';
import type { UpstreamLink, UpstreamUser } from './upstream-user.js';

/** Where a connection is in its life. */
export type UpstreamPhase =
  /** Opening the TCP (or TLS) connection, for the exchange that asked for it. */
  | 'connecting'
  /** Serving an exchange: its request being written, or its response awaited or read. */
  | 'busy'
  /** In the pool, kept alive for the next exchange until `expiresAt`. */
  | 'idle'
  /** Destroyed or closed by the upstream; the pool forgets it once its socket closes. */
  | 'closed';

/** Every move a connection can make between phases. */
export const UPSTREAM_MOVES = {
  /** The TCP (or TLS) handshake completed. */
  connected: { from: ['connecting'], to: 'busy' },
  /** Its exchange ended with both sides keeping the connection. */
  released: { from: ['busy'], to: 'idle' },
  /** The pool hands an idle connection to the next exchange. */
  assigned: { from: ['idle'], to: 'busy' },
  /** Destroyed, or the upstream closed it. */
  closed: { from: ['connecting', 'busy', 'idle'], to: 'closed' },
} as const satisfies Record<string, MoveRule<UpstreamPhase>>;

/** What a connection reports to the pool it belongs to. */
export interface UpstreamHome {
  /** A connection finished an exchange and may be reused. */
  release(conn: UpstreamConnection): void;
  /** A connection's socket closed. */
  forget(conn: UpstreamConnection): void;
}

/** Idle time after which a connection is dropped when the upstream announced none (undici's default). */
const DEFAULT_IDLE_MS = 4000;
/** Margin taken off the upstream's own Keep-Alive timeout, so we never send on a closing socket. */
const IDLE_MARGIN_MS = 2000;
/**
 * Own read buffers a connection sets aside while the client holds their bytes: at this many it
 * stops reading until the client has sent everything (a client that keeps a small backlog without
 * ever filling its socket buffer would otherwise make it take a new buffer for every read).
 */
const MAX_LENT = 2;

/** One keep-alive connection to the upstream. */
export class UpstreamConnection implements UpstreamLink, ReaderOwner {
  readonly socket: Socket;
  private readonly writer: SocketWriter;
  private readonly reader: ResponseReader;
  phase: UpstreamPhase = 'connecting';
  user: UpstreamUser | null = null;
  /** Whether it served a request before the current one. */
  reused = false;
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
  /** The client still held unsent bytes after the last flush. */
  holding = false;
  private received = 0;
  private inExecute = false;
  private releaseAfterExecute = false;
  private errorCode: string | null = null;
  /** The buffer the next read goes into (plain connections). */
  private readInto: Buffer = SHARED_READ_BUFFER;
  /** Own read buffers whose bytes the client may not have taken yet. */
  private lent: Buffer[] = [];
  /** Reading stopped until the client has sent what it holds (MAX_LENT). */
  private waitingForClient = false;

  constructor(
    private readonly home: UpstreamHome,
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
    this.reader = new ResponseReader(this);
  }

  /** Closed or closing: it serves no exchange again. */
  get dead(): boolean {
    return this.phase === 'closed';
  }

  /** Hands the connection to `user` (the pool calls this). */
  assign(user: UpstreamUser): void {
    if (this.phase === 'idle') makeMove(this, UPSTREAM_MOVES.assigned);
    this.user = user;
    this.received = 0;
    this.requestSent = false;
    this.reader.reset();
    this.socket.ref();
    user.onUpstream(this);
  }

  write(data: string | Buffer): boolean {
    return this.writer.write(data);
  }

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

  release(reusable: boolean, keepAliveMs: number): void {
    this.user = null;
    this.forgetLent();
    if (this.paused) this.resume();
    const idleMs = keepAliveMs < 0 ? DEFAULT_IDLE_MS : keepAliveMs - IDLE_MARGIN_MS;
    if (!reusable || idleMs <= 0 || !makeMove(this, UPSTREAM_MOVES.released)) {
      this.destroy();
      return;
    }
    this.expiresAt = timeMs() + idleMs;
    this.reused = true;
    // Bytes after the response in the same packet are parsed before the next exchange may start.
    if (this.inExecute) this.releaseAfterExecute = true;
    else this.home.release(this);
  }

  /** Closes it for good (the pool forgets it when the socket closes). */
  destroy(): void {
    this.user = null;
    this.forgetLent();
    makeMove(this, UPSTREAM_MOVES.closed);
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
    makeMove(this, UPSTREAM_MOVES.connected);
    this.lastActive = timeMs();
  };

  private readonly nextReadBuffer = (): Buffer => this.readInto;

  private readonly onRead = (length: number, buffer: Buffer): boolean => {
    const own = buffer !== SHARED_READ_BUFFER;
    this.onData(buffer.subarray(0, length), own);
    // A body going on past this read is read into buffers of the connection's own, so its bytes
    // can go to the client as they are; one still being written to the client is not reused.
    const streaming = this.user !== null && this.reader.locating && !this.dead;
    if (own) {
      if (this.holding) {
        // Dropped rather than kept when the exchange ended: its client is no longer tracked.
        if (this.user !== null) {
          this.lent.push(buffer);
          if (this.lent.length >= MAX_LENT && !this.waitingForClient) this.waitForClient(this.user);
        }
      } else if (streaming) return true;
      else spareReadBuffer(buffer);
    }
    this.readInto = streaming ? takeReadBuffer() : SHARED_READ_BUFFER;
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
    for (const b of this.lent) spareReadBuffer(b);
    this.lent.length = 0;
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
      const parsed = this.reader.parse(data, own);
      this.inExecute = false;
      if (!parsed) return;
      if (this.user !== null) {
        this.holding = this.user.onUpstreamFlush();
        if (!this.holding) this.reclaim();
      }
      if (this.releaseAfterExecute) {
        this.releaseAfterExecute = false;
        if (!this.dead) this.home.release(this);
      }
    } finally {
      releaseTime();
    }
  };

  private readonly onDrain = (): void => {
    this.user?.onUpstreamDrain();
  };

  private readonly onEnd = (): void => {
    // The upstream closed its side: that completes a response delimited by the close, or
    // cuts one short.
    makeMove(this, UPSTREAM_MOVES.closed);
    if (this.user !== null) {
      this.inExecute = true;
      const finished = this.reader.finish();
      this.inExecute = false;
      if (!finished) return;
      this.releaseAfterExecute = false;
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
    makeMove(this, UPSTREAM_MOVES.closed);
    if (this.user !== null) this.fail(this.errorCode ?? 'UPSTREAM_CLOSED');
    this.reader.close();
    this.home.forget(this);
  };
}
