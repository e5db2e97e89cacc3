// What the proxy needs from an HTTP/1 parser: llhttp in strict mode (no lenient flags), with
// node:http's 16 KiB limit on a head, reporting through callbacks shaped as Node's HTTPParser
// binding reports them. Two backends implement it (builtin.ts, wasm.ts); index.ts picks one.

/** A parse failure: llhttp's error code (e.g. HPE_INVALID_METHOD), its reason, where it stopped. */
export interface ParseError extends Error {
  code: string;
  reason?: string;
  bytesParsed?: number;
}

/** The two backends: Node's own binding, and llhttp compiled to WebAssembly. */
export const PARSER_BACKENDS = ['builtin', 'wasm'] as const;
export type ParserBackendName = (typeof PARSER_BACKENDS)[number];

/** llhttp's parser types (HTTP_REQUEST, HTTP_RESPONSE); Node's binding uses the same numbers. */
export const REQUEST = 1;
export const RESPONSE = 2;
export type ParserType = typeof REQUEST | typeof RESPONSE;

/**
 * The callbacks a parser reports to. `onHeadersComplete` gets, in this order: major, minor,
 * headers (raw name/value pairs), method (an index into METHODS; requests), url (requests),
 * status and reason (responses), upgrade, keep-alive; absent ones are undefined. Its result: 1
 * when the message has no body whatever its headers say (a response to HEAD), else 0.
 */
export interface ParserCallbacks {
  /** Headers delivered ahead of onHeadersComplete (a long head) or after a body (trailers). */
  onHeaders?: (...args: never[]) => void;
  onHeadersComplete: (...args: never[]) => unknown;
  onBody: (...args: never[]) => void;
  onMessageComplete: () => void;
}

/** One connection's parser. */
export interface HttpParser {
  /** Parses `data`, calling the callbacks; returns the bytes consumed or the error. */
  execute(data: Buffer): number | ParseError;
  /** Signals end of input (completes a response delimited by the connection's close). */
  finish(): ParseError | undefined;
  /**
   * Sets or clears (null) the body callback. Without one no body bytes are copied or reported:
   * llhttp still parses and checks the framing.
   */
  setBodyCallback(onBody: ((chunk: Buffer) => void) | null): void;
  /** Sets or clears (null) the message-complete callback. */
  setMessageCompleteCallback(onComplete: (() => void) | null): void;
  /** Frees it; not while one of its callbacks runs (see releaseParser). */
  close(): void;
}

/** A way to make parsers. */
export interface ParserBackend {
  readonly name: ParserBackendName;
  create(type: ParserType, callbacks: ParserCallbacks): HttpParser;
}

/**
 * HTTP method names by llhttp's method number (its HTTP_METHOD_MAP), which both backends report.
 * Node's own `methods` list is by position and differs from 34 on (it has no PRI, so QUERY's
 * number, 46, has no name there).
 */
export const METHODS: readonly string[] = (() => {
  const names = [
    'DELETE',
    'GET',
    'HEAD',
    'POST',
    'PUT',
    'CONNECT',
    'OPTIONS',
    'TRACE',
    'COPY',
    'LOCK',
    'MKCOL',
    'MOVE',
    'PROPFIND',
    'PROPPATCH',
    'SEARCH',
    'UNLOCK',
    'BIND',
    'REBIND',
    'UNBIND',
    'ACL',
    'REPORT',
    'MKACTIVITY',
    'CHECKOUT',
    'MERGE',
    'M-SEARCH',
    'NOTIFY',
    'SUBSCRIBE',
    'UNSUBSCRIBE',
    'PATCH',
    'PURGE',
    'MKCALENDAR',
    'LINK',
    'UNLINK',
    'SOURCE',
    'PRI',
  ];
  names[46] = 'QUERY';
  return names;
})();

/** Whether a value returned by `execute` or `finish` is a parse error. */
export const isParseError = (r: unknown): r is ParseError => r instanceof Error;

/** A parse error as Node's binding makes one. */
export function parseError(code: string, reason: string, bytesParsed: number): ParseError {
  return Object.assign(new Error('Parse Error'), { code, reason, bytesParsed });
}
