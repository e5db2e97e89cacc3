// One client connection to the proxy: an llhttp request parser over a plain socket, and the
// exchanges it carries, one at a time. Pipelined requests wait their turn (reading pauses while they
// do); a malformed request gets 400 (431 for oversized headers) and the connection is closed, as
// node:http does.
import type { Socket } from 'node:net';
import { locateRequestBody } from './body-locator.js';
import { adoptClientSocket } from './client-socket.js';
import { SocketWriter } from './socket-writer.js';
import { holdTime, releaseTime, timeMs } from './clock.js';
import {
  ConnectionMemo,
  PAUSED_FOR_PIPELINE,
  type ClientSide,
  type ConnectionExchange,
} from './client-side.js';
import { scanRequestHeaders, type RequestHeaderScan } from './headers.js';
import {
  createParser,
  isParseError,
  METHODS,
  releaseParser,
  REQUEST,
  setBodyCallback,
  setMessageCompleteCallback,
  type HttpParser,
  type ParseError,
} from './parser/index.js';

/** What a client connection needs from the proxy, whose exchanges are of type `E`. */
export interface ConnectionHost<E extends ConnectionExchange> {
  /** Creates the exchange for a request whose head was read (not yet started). */
  createExchange(
    conn: ClientConnection<E>,
    method: string,
    url: string,
    scan: RequestHeaderScan,
    http10: boolean,
    keepAlive: boolean,
  ): E;
  /** Runs the checks and forwards (or answers) an exchange whose turn has come. */
  startExchange(ex: E): void;
  /** The proxy is shutting down: connections end after their current exchange. */
  readonly closing: boolean;
  forget(conn: ClientConnection<E>): void;
}

const CONTINUE = 'HTTP/1.1 100 Continue\r\n\r\n';
const EMPTY = Buffer.alloc(0);
/**
 * Request bodies by length up to this size that lie whole in the read with their head are taken
 * from the read buffer, sparing the parser binding's copy and its two calls into JavaScript.
 */
const LOCATE_LIMIT = 16 * 1024;

/** One accepted client connection. */
export class ClientConnection<E extends ConnectionExchange> implements ClientSide {
  private readonly parser: HttpParser;
  /** The exchange whose response is being produced. */
  private current: E | null = null;
  /** Pipelined requests waiting for `current` to finish. */
  private readonly queue: E[] = [];
  /** The exchange whose request body the parser is reading. */
  private parsing: E | null = null;
  private headerParts: string[] | null = null;
  private urlPart = '';
  /** Whether the parser calls onMessageComplete (cleared while requests end with their head). */
  private completeCallbackSet = true;
  /** Whether the parser calls onBody (cleared while bodies are located in the read). */
  private bodyCallbackSet = true;
  // Locating bodies in the read being parsed (see locateBody).
  /** The read being parsed, during `execute` only. */
  private reading: Buffer = EMPTY;
  /** Where in it the next request not yet located begins; -1 when unknown. */
  private cursor = -1;
  /** Requests ending with their head completed from `cursor` on, not yet stepped over. */
  private headsAfterCursor = 0;
  /** The previous read ended with a complete request (the next read starts with a new one). */
  private atBoundary = true;
  private pausedBy = 0;
  /** No more requests are read (closing, or the input can no longer be parsed). */
  private stopped = false;
  // Times below are in timeMs() (clock.ts), as the server's sweeper compares them.
  /** When the connection was ended by us (lingering for the client to close), else 0. */
  endedAt = 0;
  /** Last time bytes arrived or a response was finished. */
  lastActive = timeMs();
  /** When the first bytes of a request head not yet complete arrived, else 0. */
  headStartedAt = 0;
  /** When the head of a request whose body is still being read arrived, else 0. */
  bodyStartedAt = 0;

  readonly socket: Socket;
  private readonly writer: SocketWriter;
  readonly memo = new ConnectionMemo();

  /** `accepted`: a connection the server accepted paused (`pauseOnConnect`). */
  constructor(
    private readonly host: ConnectionHost<E>,
    accepted: Socket,
    highWaterMark: number,
  ) {
    this.parser = createParser(REQUEST, {
      onHeaders: this.onHeaders,
      onHeadersComplete: this.onHeadersComplete,
      onBody: this.onBody,
      onMessageComplete: this.onMessageComplete,
    });
    const socket = adoptClientSocket(accepted, this.onData, highWaterMark);
    this.socket = socket;
    socket.on('end', this.onEnd);
    socket.on('error', noop);
    socket.on('close', this.onClose);
    this.writer = new SocketWriter(socket, this.onDrain);
  }

  /** Nothing in flight and no request begun: safe to close. */
  get idle(): boolean {
    return this.current === null && this.parsing === null && this.headStartedAt === 0;
  }

  write(data: string | Buffer): boolean {
    if (this.socket.destroyed) return true;
    return this.writer.write(data);
  }

  get holdsWrites(): boolean {
    return this.writer.holdsWrites;
  }

  afterWrites(done: () => void): void {
    this.writer.afterWrites(done);
  }

  /** Writes several parts in one system call. */
  writeAll(parts: (string | Buffer)[]): boolean {
    if (this.socket.destroyed) return true;
    this.socket.cork();
    let ok = true;
    for (const p of parts) ok = typeof p === 'string' ? this.socket.write(p, 'latin1') : this.socket.write(p);
    this.socket.uncork();
    return ok;
  }

  pauseReading(reason: number): void {
    if (this.pausedBy === 0) this.socket.pause();
    this.pausedBy |= reason;
  }

  resumeReading(reasons: number): void {
    if (this.pausedBy === 0) return;
    this.pausedBy &= ~reasons;
    if (this.pausedBy === 0) this.socket.resume();
  }

  destroy(): void {
    this.stopped = true;
    this.socket.destroy();
  }

  /** Ends the connection once what was written is sent; the client's further bytes are ignored. */
  end(): void {
    this.stopped = true;
    if (this.endedAt !== 0 || this.socket.destroyed) return;
    this.endedAt = timeMs();
    // Keep reading (and discarding) so unread input does not turn our close into a reset that
    // could destroy the response before the client reads it; the host destroys lingerers.
    this.pausedBy = 0;
    this.socket.resume();
    this.socket.end();
  }

  /** An exchange's response is complete (or it was given up). */
  exchangeDone(ex: ConnectionExchange): void {
    if (ex !== this.current) return;
    this.current = null;
    this.lastActive = timeMs();
    if (ex.closeAfter || this.host.closing || this.stopped) {
      this.end();
      return;
    }
    const next = this.queue.shift();
    if (next === undefined) return;
    if (this.queue.length === 0) this.resumeReading(PAUSED_FOR_PIPELINE);
    this.begin(next);
  }

  /**
   * Answers a request the proxy cannot take at all, as node:http does (a bare status, then the
   * connection closes). With another exchange in flight, its response goes first and the
   * connection closes after it.
   */
  private refuse(status: number, reason: string): void {
    this.stopped = true;
    if (this.current !== null) return;
    this.writeBare(status, reason);
    this.end();
  }

  private writeBare(status: number, reason: string): void {
    if (this.endedAt !== 0 || this.socket.destroyed) return;
    this.socket.write(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\n\r\n`, 'latin1');
  }

  private begin(ex: E): void {
    this.current = ex;
    if (ex.scan.expect !== null) this.write(CONTINUE);
    this.host.startExchange(ex);
  }

  private readonly onData = (data: Buffer): void => {
    holdTime();
    try {
      this.lastActive = timeMs();
      if (this.stopped) return;
      if (this.parsing === null && this.headStartedAt === 0) this.headStartedAt = this.lastActive;
      this.reading = data;
      this.cursor = this.atBoundary ? 0 : -1;
      this.headsAfterCursor = 0;
      const r = this.parser.execute(data);
      this.reading = EMPTY;
      this.atBoundary = this.parsing === null && this.endsWithRequest(data);
      if (isParseError(r)) this.parseError(r);
    } finally {
      releaseTime();
    }
  };

  private parseError(err: ParseError): void {
    const [status, reason] =
      err.code === 'HPE_HEADER_OVERFLOW' ? [431, 'Request Header Fields Too Large'] : [400, 'Bad Request'];
    const cur = this.current;
    this.stopped = true;
    if (cur === null) {
      this.writeBare(status, reason);
      this.end();
    } else if (this.parsing === cur) {
      // The body of the request in flight is malformed: it is not forwarded any further.
      if (cur.hasResponded) this.destroy();
      else this.writeBare(status, reason);
      cur.clientError(status, err.code);
    } else {
      // A pipelined request behind the one in flight is malformed: nothing after it can be read.
      this.destroy();
    }
  }

  private readonly onHeaders = (headers: string[], url: string): void => {
    // Trailers of the chunked body being read (with that request's URL again): they end it, are
    // not forwarded, and are no part of the next request's head.
    if (this.parsing !== null) return;
    this.headerParts = this.headerParts === null ? headers : this.headerParts.concat(headers);
    this.urlPart += url;
  };

  private readonly onHeadersComplete = (
    major: number,
    minor: number,
    headers: string[] | undefined,
    methodIndex: number,
    url: string | undefined,
    _status: number,
    _reason: string,
    upgrade: boolean,
    keepAlive: boolean,
  ): number => {
    this.headStartedAt = 0;
    let raw = headers ?? [];
    let target = url ?? '';
    if (this.headerParts !== null) {
      raw = this.headerParts.concat(raw);
      target = this.urlPart + target;
      this.headerParts = null;
      this.urlPart = '';
    }
    if (this.stopped) return 0;
    const method = METHODS[methodIndex] ?? '';
    if (method === 'CONNECT') {
      // Not proxied; node:http without a 'connect' listener closes the connection too.
      this.destroy();
      return 0;
    }
    const scan = scanRequestHeaders(raw);
    const http10 = major === 1 && minor === 0;
    if (!scan.hasHost && !http10) {
      this.refuse(400, 'Bad Request');
      return 0;
    }
    if (scan.expect !== null && scan.expect.trim().toLowerCase() !== '100-continue') {
      this.refuse(417, 'Expectation Failed');
      return 0;
    }
    const ex = this.host.createExchange(this, method, target, scan, http10, keepAlive);
    this.parsing = ex;
    this.bodyStartedAt = this.lastActive;
    // A request without a body ends with its head: llhttp completes it right after this callback,
    // so it is ended here and the binding spared a call into JavaScript for it (a GET's usual case).
    // So does a small body found whole in this read (a POST's usual case): it is handed on from the
    // read buffer, and the binding neither copies it nor calls into JavaScript for it or the end.
    // The callbacks' slots are written only when that changes.
    const endsWithHead = !scan.hasBody && !upgrade;
    const body = endsWithHead || upgrade ? null : this.locateBody(scan);
    if (endsWithHead) {
      if (this.cursor >= 0) this.headsAfterCursor++;
    } else if (body === null) this.cursor = -1;
    const known = endsWithHead || body !== null;
    if (known === this.completeCallbackSet) {
      this.completeCallbackSet = !known;
      setMessageCompleteCallback(this.parser, known ? null : this.onMessageComplete);
    }
    if ((body === null) !== this.bodyCallbackSet) {
      this.bodyCallbackSet = body === null;
      setBodyCallback(this.parser, body === null ? this.onBody : null);
    }
    // After a request announcing an upgrade the parser reads no further (we never switch
    // protocols): that request is served, then the connection closes.
    if (upgrade) this.stopped = true;
    if (this.current === null) this.begin(ex);
    else {
      // A pipelined request: it waits, and reading pauses until the ones before it are answered.
      this.queue.push(ex);
      this.pauseReading(PAUSED_FOR_PIPELINE);
    }
    if (body !== null) this.onWholeMessage(body);
    else if (endsWithHead) this.onMessageComplete();
    return 0;
  };

  /**
   * The body of the request whose head llhttp just completed, as a view of the read, when it is
   * declared by length (at most LOCATE_LIMIT) and lies whole in the read; else null (the binding's
   * body callback delivers it). Where the request starts is known at the start of a read that
   * follows a complete request, else after the requests of this read located before it.
   */
  private locateBody(scan: RequestHeaderScan): Buffer | null {
    const length = scan.contentLength;
    if (this.cursor < 0 || scan.chunked || length <= 0 || length > LOCATE_LIMIT) return null;
    const start = locateRequestBody(this.reading, this.cursor, this.headsAfterCursor, length);
    if (start < 0) return null;
    this.headsAfterCursor = 0;
    this.cursor = start + length;
    return this.reading.subarray(start, this.cursor);
  }

  /**
   * Whether a read after which no request is being read ended with a complete request rather than
   * with the start of the next one (then the next read starts with a request).
   */
  private endsWithRequest(data: Buffer): boolean {
    if (this.cursor === data.length && this.headsAfterCursor === 0) return true;
    // A request ending with its head, or a chunked body: both end with CRLFCRLF, and so does no
    // incomplete head (llhttp would have completed it; empty lines between requests it skips).
    const n = data.length;
    return n >= 4 && data[n - 1] === 10 && data[n - 2] === 13 && data[n - 3] === 10 && data[n - 4] === 13;
  }

  private readonly onBody = (chunk: Buffer): void => {
    this.parsing?.onRequestBody(chunk);
  };

  private readonly onMessageComplete = (): void => {
    this.takeParsing()?.onRequestEnd();
  };

  private onWholeMessage(body: Buffer): void {
    this.takeParsing()?.onRequestWhole(body);
  }

  /** The request being read is read completely: its exchange, no longer the one being parsed. */
  private takeParsing(): E | null {
    const ex = this.parsing;
    this.parsing = null;
    this.bodyStartedAt = 0;
    return ex;
  }

  private readonly onDrain = (): void => {
    this.current?.onClientDrain();
  };

  private readonly onEnd = (): void => {
    // The client closed its side. Like node:http (without allowHalfOpen), whatever is still in
    // flight is abandoned and the connection closed.
    if (this.endedAt === 0 && !this.idle) {
      this.destroy();
      return;
    }
    this.stopped = true;
    if (this.socket.writableFinished) this.socket.destroy();
    else this.socket.end(() => this.socket.destroy());
  };

  private readonly onClose = (): void => {
    this.stopped = true;
    const current = this.current;
    this.current = null;
    this.parsing = null;
    current?.abort();
    // Queued pipelined requests never started: there is nothing to log for them.
    this.queue.length = 0;
    releaseParser(this.parser);
    this.host.forget(this);
  };
}

function noop(): void {}
