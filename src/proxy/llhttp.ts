// Node's own HTTP/1 parser: the llhttp binding that node:http's server and client use, reached
// through the built-in module `_http_common` (it has no public name). The proxy parses requests and
// responses with it instead of going through IncomingMessage/ServerResponse and undici; framing
// (Content-Length, chunked, conflicting or duplicate lengths, header and URL characters) is decided
// by llhttp exactly as node:http decides it, never by code of ours.
import { createRequire } from 'node:module';

/** A parse failure as the binding reports it (an Error with llhttp's code, e.g. HPE_INVALID_METHOD). */
export interface ParseError extends Error {
  code: string;
  reason?: string;
  bytesParsed?: number;
}

/** The binding's parser object (see node's src/node_http_parser.cc). */
export interface HttpParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  /** Parses `data`, calling the callbacks; returns the bytes consumed or the error. */
  execute(data: Buffer): number | ParseError;
  /** Signals end of input (completes a response delimited by the connection's close). */
  finish(): ParseError | undefined;
  close(): void;
  free(): void;
  remove(): void;
  [callback: number]: unknown;
}

interface HttpCommon {
  HTTPParser: {
    new (): HttpParser;
    prototype: Partial<HttpParser>;
    REQUEST: number;
    RESPONSE: number;
    kOnMessageBegin: number;
    kOnHeaders: number;
    kOnHeadersComplete: number;
    kOnBody: number;
    kOnMessageComplete: number;
    kLenientNone?: number;
  };
  methods: string[];
}

const common = createRequire(import.meta.url)('_http_common') as HttpCommon;
const { HTTPParser } = common;
if (
  typeof HTTPParser !== 'function' ||
  !Array.isArray(common.methods) ||
  typeof HTTPParser.prototype.execute !== 'function' ||
  typeof HTTPParser.kOnHeadersComplete !== 'number' ||
  typeof HTTPParser.kOnBody !== 'number'
) {
  throw new Error("this Node.js has no usable HTTPParser in '_http_common'; the proxy needs it");
}

export { HTTPParser };
/** Method names by the index the parser reports. */
export const METHODS: readonly string[] = common.methods;
export const REQUEST = HTTPParser.REQUEST;
export const RESPONSE = HTTPParser.RESPONSE;
const ON_MESSAGE_BEGIN = HTTPParser.kOnMessageBegin;
const ON_HEADERS = HTTPParser.kOnHeaders;
const ON_HEADERS_COMPLETE = HTTPParser.kOnHeadersComplete;
const ON_BODY = HTTPParser.kOnBody;
const ON_MESSAGE_COMPLETE = HTTPParser.kOnMessageComplete;
/** Strict parsing, as node:http without --insecure-http-parser. */
export const STRICT = HTTPParser.kLenientNone ?? 0;

/** The callbacks a parser reports to, by the binding's slot (see node's _http_common). */
export interface ParserCallbacks {
  /** Headers of a head too long for one onHeadersComplete call (node's parser splits them). */
  onHeaders?: (...args: never[]) => void;
  onHeadersComplete: (...args: never[]) => unknown;
  onBody: (...args: never[]) => void;
  onMessageComplete: () => void;
}

/**
 * A fresh parser of `type` (REQUEST or RESPONSE) with node's default header size limit,
 * reporting to `callbacks`.
 */
export function createParser(type: number, callbacks: ParserCallbacks): HttpParser {
  const parser = new HTTPParser();
  // 0: node's --max-http-header-size (16 KiB by default), as node:http uses.
  parser.initialize(type, {}, 0, STRICT);
  // The binding looks up the message-begin slot at every message: a slot never set is a hole,
  // which sends that lookup up the prototype chain each time; an own undefined ends it at once.
  parser[ON_MESSAGE_BEGIN] = undefined;
  if (callbacks.onHeaders !== undefined) parser[ON_HEADERS] = callbacks.onHeaders;
  parser[ON_HEADERS_COMPLETE] = callbacks.onHeadersComplete;
  parser[ON_BODY] = callbacks.onBody;
  parser[ON_MESSAGE_COMPLETE] = callbacks.onMessageComplete;
  return parser;
}

/**
 * Frees a parser's native side once its connection has closed. The binding's objects are not
 * garbage-collected (node:http closes its parsers too); like node, wait for the stack to unwind
 * so no `execute` is still running on it.
 */
export function releaseParser(parser: HttpParser): void {
  setImmediate(closeParser, parser);
}

function closeParser(parser: HttpParser): void {
  parser.close();
}

/**
 * Sets or clears (null) the parser's body callback. Without one the binding neither copies the body
 * bytes nor calls into JavaScript for them: llhttp still parses and checks the framing.
 */
export function setBodyCallback(parser: HttpParser, onBody: ((chunk: Buffer) => void) | null): void {
  parser[ON_BODY] = onBody ?? undefined;
}

/**
 * Sets or clears (null) the parser's message-complete callback. Without one the binding does not
 * call into JavaScript when a message ends (a caller that knows the end from the head handles it).
 */
export function setMessageCompleteCallback(parser: HttpParser, onComplete: (() => void) | null): void {
  parser[ON_MESSAGE_COMPLETE] = onComplete ?? undefined;
}

/** Whether a value returned by `execute` or `finish` is a parse error. */
export const isParseError = (r: unknown): r is ParseError => r instanceof Error;
