// The parser seam: which backend this process parses HTTP/1 with, and the calls the proxy's
// connections make. PROXY_HTTP_PARSER chooses: `builtin` (Node's binding), `wasm` (llhttp in
// WebAssembly), or `auto`: the built-in one when this Node.js has it and it passes a self-check,
// else wasm.
import type { ProxyHttpParser } from '../../config.js';
import { loadBuiltinBackend } from './builtin.js';
import {
  isParseError,
  PARSER_BACKENDS,
  REQUEST,
  type HttpParser,
  type ParserBackend,
  type ParserBackendName,
  type ParserCallbacks,
  type ParserType,
} from './parser.js';
import { loadWasmBackend } from './wasm.js';

export { isParseError, METHODS, REQUEST, RESPONSE } from './parser.js';
export type { HttpParser, ParseError, ParserBackendName, ParserCallbacks } from './parser.js';

/** PROXY_HTTP_PARSER's values: a backend, or `auto`. */
export type ParserChoice = ProxyHttpParser;

/** The backend `name`, or null when this Node.js cannot run it or it fails its self-check. */
export function loadParserBackend(name: ParserBackendName): ParserBackend | null {
  let backend: ParserBackend | null;
  switch (name) {
    case 'builtin':
      backend = loadBuiltinBackend();
      break;
    case 'wasm':
      backend = loadWasmBackend();
      break;
    default: {
      const unknown: never = name;
      throw new Error(`unknown parser backend ${String(unknown)}`);
    }
  }
  return backend !== null && passesSelfCheck(backend) ? backend : null;
}

/**
 * Whether a backend reads a request and refuses ambiguous framing, as llhttp in strict mode does:
 * an internal that changed shape fails here rather than on a client's request.
 */
function passesSelfCheck(backend: ParserBackend): boolean {
  try {
    const seen: string[] = [];
    const parser = backend.create(REQUEST, {
      onHeadersComplete: (_major: number, _minor: number, headers: string[], _m: number, url: string) => {
        seen.push(url, ...headers);
        return 0;
      },
      onBody: (chunk: Buffer) => void seen.push(chunk.toString('latin1')),
      onMessageComplete: () => void seen.push('end'),
    });
    const good = 'POST /a HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\nok';
    const read = parser.execute(Buffer.from(good, 'latin1'));
    const smuggled = 'POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n';
    const refused = parser.execute(Buffer.from(smuggled, 'latin1'));
    parser.close();
    return (
      read === good.length &&
      seen.join('|') === '/a|Host|h|Content-Length|2|ok|end' &&
      isParseError(refused) &&
      refused.code === 'HPE_INVALID_TRANSFER_ENCODING'
    );
  } catch {
    return false;
  }
}

let active: ParserBackend | null = null;

/**
 * Makes `choice` the backend of this process's parsers and returns it; throws when a forced
 * backend cannot run here.
 */
export function useParserBackend(choice: ParserChoice): ParserBackend {
  const backend =
    choice === 'auto'
      ? (loadParserBackend('builtin') ?? loadParserBackend('wasm'))
      : loadParserBackend(choice);
  if (backend === null) {
    throw new Error(
      choice === 'builtin'
        ? "PROXY_HTTP_PARSER=builtin: this Node.js has no working HTTPParser in '_http_common'"
        : `PROXY_HTTP_PARSER=${choice}: no HTTP parser backend works on this Node.js`,
    );
  }
  active = backend;
  return backend;
}

/** The backend parsers are made with (`auto`'s choice until one is set). */
export function parserBackend(): ParserBackend {
  return active ?? useParserBackend('auto');
}

/** A fresh strict parser of `type` (REQUEST or RESPONSE) reporting to `callbacks`. */
export function createParser(type: ParserType, callbacks: ParserCallbacks): HttpParser {
  return (active ?? useParserBackend('auto')).create(type, callbacks);
}

/**
 * Frees a parser once its connection has closed; like node:http, after the stack has unwound, so
 * no `execute` is still running on it.
 */
export function releaseParser(parser: HttpParser): void {
  setImmediate(closeParser, parser);
}

function closeParser(parser: HttpParser): void {
  parser.close();
}

/** Sets or clears (null) the parser's body callback (see HttpParser). */
export function setBodyCallback(parser: HttpParser, onBody: ((chunk: Buffer) => void) | null): void {
  parser.setBodyCallback(onBody);
}

/** Sets or clears (null) the parser's message-complete callback. */
export function setMessageCompleteCallback(parser: HttpParser, onComplete: (() => void) | null): void {
  parser.setMessageCompleteCallback(onComplete);
}

/** Every backend that runs on this Node.js (the tests check each against the others). */
export function availableParserBackends(): ParserBackend[] {
  return PARSER_BACKENDS.map(loadParserBackend).filter((b): b is ParserBackend => b !== null);
}
