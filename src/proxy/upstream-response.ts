// Reading responses off one upstream connection: llhttp decides every framing question, and the
// body locator finds where the body's bytes lie in each read so they are handed on as views of the
// read buffer instead of the copies llhttp's body callback makes. The located bytes are used only
// when llhttp accepted them and ended the message exactly where the locator did; anything else
// fails the exchange (UPSTREAM_FRAMING).
import { BodyLocator, BY_LENGTH, CONFUSED, CONTINUES, locatableFraming } from './body-locator.js';
import {
  createParser,
  isParseError,
  releaseParser,
  RESPONSE,
  setBodyCallback,
  type HttpParser,
} from './parser/index.js';
import type { UpstreamUser } from './upstream-user.js';

/** The connection a reader parses for. */
export interface ReaderOwner {
  /** The exchange being served; null when none (a response then is unexpected). */
  readonly user: UpstreamUser | null;
  /** The connection is closed or closing: stop parsing. */
  readonly dead: boolean;
  /** The client still holds bytes of the read last handed on (set when a located body ends). */
  holding: boolean;
  /** Fails the current exchange with `code` and closes the connection. */
  fail(code: string): void;
  destroy(): void;
}

/** The response parser of one upstream connection. */
export class ResponseReader {
  private readonly parser: HttpParser;
  private readonly locator = new BodyLocator();
  private informational = false;
  private headerParts: string[] | null = null;
  /** The current response's body is located (else llhttp's body callback copies it). */
  locating = false;
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

  constructor(private readonly owner: ReaderOwner) {
    this.parser = createParser(RESPONSE, {
      onHeaders: this.onHeaders,
      onHeadersComplete: this.onHeadersComplete,
      onBody: this.onBody,
      onMessageComplete: this.onMessageComplete,
    });
  }

  /** A new exchange starts on the connection: the next bytes are its response. */
  reset(): void {
    this.locator.reset();
    this.finalHead = false;
    this.locating = false;
    this.copyingBody = false;
    this.messageDone = false;
  }

  /**
   * Runs llhttp over `data` piece by piece: a head up to where the locator ends it, a located body
   * up to its end (handing on views of its bytes once llhttp accepted them), or, for a body llhttp
   * delivers itself, the rest. `own`: `data` is in a read buffer of the connection's own. Returns
   * false when the connection failed.
   */
  parse(data: Buffer, own: boolean): boolean {
    const { owner } = this;
    const n = data.length;
    let pos = 0;
    while (pos < n) {
      if (owner.dead) return false;
      const user = owner.user;
      if (user === null) {
        // Bytes after the complete response: the framing is off.
        owner.fail('UPSTREAM_UNEXPECTED_RESPONSE');
        return false;
      }
      if (this.copyingBody) return this.execute(data, pos, n);
      if (!this.locating) return this.parseHead(data, pos, own);
      const spans = this.emptySpans();
      const end = this.locator.scanBody(data, pos, spans);
      const stop = end < 0 ? n : end;
      if (!this.execute(data, pos, stop)) return false;
      if (end === CONFUSED || this.messageDone !== end >= 0) {
        // llhttp accepted bytes the locator read differently: trust neither.
        owner.fail('UPSTREAM_FRAMING');
        return false;
      }
      for (let i = 0; i < spans.length; i += 2) user.onResponseBody(data.subarray(spans[i], spans[i + 1]));
      if (end >= 0) this.endLocated(own);
      pos = stop;
    }
    return !owner.dead;
  }

  /**
   * The upstream closed its side: that completes a response delimited by the close (true), or
   * leaves it unfinished (false; a parse error fails the exchange at once).
   */
  finish(): boolean {
    const r = this.parser.finish();
    if (isParseError(r)) {
      this.owner.fail(r.code);
      return false;
    }
    if (this.locating && this.messageDone) this.endLocated(false);
    return true;
  }

  /** Frees the parser once the connection has closed. */
  close(): void {
    releaseParser(this.parser);
  }

  /**
   * From a head on, llhttp reads the rest of the read in one call: the head and, without a body
   * callback when the body is located, the body. The body is located after the call, from where
   * the heads completed in it end: at successive CRLFCRLFs (1xx answers have no body).
   */
  private parseHead(data: Buffer, pos: number, own: boolean): boolean {
    const { owner } = this;
    const n = data.length;
    this.headsInCall = 0;
    const piece = pos === 0 ? data : data.subarray(pos);
    const r = this.parser.execute(piece);
    if (owner.dead) return false;
    const error = isParseError(r) ? r : null;
    let at = pos;
    // Heads are located only while a body may still need it (not after a final head whose body
    // llhttp delivers, or that has none: the usual small answer).
    if (!this.finalHead || this.locating) {
      for (let k = 0; k < this.headsInCall && at >= 0; k++) at = this.locator.headEnd(data, at);
      // No head completed: the locator must not see one either (and keeps a split CRLFCRLF's start).
      if (this.headsInCall === 0 && error === null && this.locator.headEnd(data, pos) >= 0) at = -1;
      if (at < 0 && error === null) {
        owner.fail('UPSTREAM_FRAMING');
        return false;
      }
    }
    if (!this.locating) {
      // No body, or one llhttp's callback delivered: nothing to locate.
      if (error !== null) owner.fail(error.code);
      else if (r !== piece.length) owner.fail('HPE_UPSTREAM_UPGRADE');
      return !owner.dead;
    }
    const spans = this.emptySpans();
    const end = at < 0 ? CONFUSED : this.locator.scanBody(data, at, spans);
    // Where llhttp stopped: the whole read, or the error's position.
    const parsedTo = error === null ? n : pos + (error.bytesParsed ?? 0);
    const complete = this.messageDone && end >= 0 && end <= parsedTo;
    if (!complete && (error !== null || end !== CONTINUES || this.messageDone)) {
      owner.fail(error?.code ?? 'UPSTREAM_FRAMING');
      return false;
    }
    const user = owner.user;
    if (user === null) return false;
    for (let i = 0; i < spans.length; i += 2) user.onResponseBody(data.subarray(spans[i], spans[i + 1]));
    if (!complete) return true;
    this.endLocated(own);
    if (end < n) {
      // Bytes after the complete answer (llhttp read them too): this connection is done.
      owner.destroy();
      return false;
    }
    return !owner.dead;
  }

  /** llhttp over data[from, to): false (the connection failed) on a parse error or upgrade. */
  private execute(data: Buffer, from: number, to: number): boolean {
    const piece = from === 0 && to === data.length ? data : data.subarray(from, to);
    const r = this.parser.execute(piece);
    if (isParseError(r)) {
      this.owner.fail(r.code);
      return false;
    }
    if (r !== piece.length && !this.owner.dead) {
      // The parser stopped early (an upgrade): nothing after it can be trusted.
      this.owner.fail('HPE_UPSTREAM_UPGRADE');
      return false;
    }
    return !this.owner.dead;
  }

  /** The located body ended: its bytes were handed on, the response is complete. */
  private endLocated(own: boolean): void {
    this.locating = false;
    this.messageDone = false;
    const user = this.owner.user;
    if (user === null) return;
    // Whether the client still holds bytes of this read's buffer decides if it is reused.
    if (own) this.owner.holding = user.onUpstreamFlush();
    user.onResponseEnd();
  }

  /**
   * An empty spans array: a new one when the last was used. Shrinking an array (`length = 0`) is a
   * call into V8's runtime; a small new array is an allocation in the young generation.
   */
  private emptySpans(): number[] {
    if (this.spans.length !== 0) this.spans = [];
    return this.spans;
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
    const user = this.owner.user;
    if (user === null || status === 101) {
      // A response nobody asked for, or a protocol switch we never requested.
      this.owner.fail(status === 101 ? 'UPSTREAM_SWITCHED_PROTOCOLS' : 'UPSTREAM_UNEXPECTED_RESPONSE');
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
    if (status !== 204 && status !== 304) this.chooseBodyReader(raw);
    return 0;
  };

  /** Locates the body whatever its size when its framing has one reading; else llhttp copies it. */
  private chooseBodyReader(raw: string[]): void {
    const framing = locatableFraming(raw, this.lengthOut);
    const length = this.lengthOut[0] as number;
    // Even a small body is located: llhttp's body callback would copy it into a Buffer of its own
    // (an allocation and a call into JavaScript per answer).
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

  private readonly onBody = (chunk: Buffer): void => {
    this.owner.user?.onResponseBody(chunk);
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
    this.owner.user?.onResponseEnd();
  };
}
