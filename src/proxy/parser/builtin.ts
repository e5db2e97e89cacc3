// Backend "builtin": Node's own llhttp binding, the parser node:http's server and client use,
// reached through the built-in module `_http_common` (no public name; deprecated as DEP0199, so a
// later Node.js may lack it: `loadBuiltinBackend` then returns null).
import { createRequire } from 'node:module';
import type { HttpParser, ParseError, ParserBackend, ParserCallbacks, ParserType } from './parser.js';

/** The binding's parser object (see node's src/node_http_parser.cc). */
interface NativeParser {
  initialize(type: number, resource: object, maxHeaderSize: number, lenient: number): void;
  execute(data: Buffer): number | ParseError;
  finish(): ParseError | undefined;
  close(): void;
  [callback: number]: unknown;
}

interface NativeParserClass {
  new (): NativeParser;
  prototype: Partial<NativeParser>;
  kOnMessageBegin: number;
  kOnHeaders: number;
  kOnHeadersComplete: number;
  kOnBody: number;
  kOnMessageComplete: number;
  kLenientNone?: number;
}

/** The binding's class, or null when this Node.js has none that looks usable. */
function nativeParserClass(): NativeParserClass | null {
  let common: { HTTPParser?: unknown };
  try {
    common = createRequire(import.meta.url)('_http_common') as { HTTPParser?: unknown };
  } catch {
    return null;
  }
  const P = common.HTTPParser as NativeParserClass | undefined;
  if (typeof P !== 'function') return null;
  const slots = [P.kOnMessageBegin, P.kOnHeaders, P.kOnHeadersComplete, P.kOnBody, P.kOnMessageComplete];
  const methods = [P.prototype.initialize, P.prototype.execute, P.prototype.finish, P.prototype.close];
  if (slots.some((s) => typeof s !== 'number') || methods.some((m) => typeof m !== 'function')) return null;
  return P;
}

/** Node's binding as a backend, or null when this Node.js does not have it. */
export function loadBuiltinBackend(): ParserBackend | null {
  const found = nativeParserClass();
  if (found === null) return null;
  const Native: NativeParserClass = found;
  const ON_MESSAGE_BEGIN = Native.kOnMessageBegin;
  const ON_HEADERS = Native.kOnHeaders;
  const ON_HEADERS_COMPLETE = Native.kOnHeadersComplete;
  const ON_BODY = Native.kOnBody;
  const ON_MESSAGE_COMPLETE = Native.kOnMessageComplete;
  // Strict parsing, as node:http without --insecure-http-parser.
  const STRICT = Native.kLenientNone ?? 0;

  class BuiltinParser implements HttpParser {
    private readonly native = new Native();

    constructor(type: ParserType, callbacks: ParserCallbacks) {
      const native = this.native;
      // 0: node's --max-http-header-size (16 KiB by default), as node:http uses.
      native.initialize(type, {}, 0, STRICT);
      // The binding looks up the message-begin slot at every message: a slot never set is a hole,
      // which sends that lookup up the prototype chain each time; an own undefined ends it at once.
      native[ON_MESSAGE_BEGIN] = undefined;
      if (callbacks.onHeaders !== undefined) native[ON_HEADERS] = callbacks.onHeaders;
      native[ON_HEADERS_COMPLETE] = callbacks.onHeadersComplete;
      native[ON_BODY] = callbacks.onBody;
      native[ON_MESSAGE_COMPLETE] = callbacks.onMessageComplete;
    }

    execute(data: Buffer): number | ParseError {
      return this.native.execute(data);
    }

    finish(): ParseError | undefined {
      return this.native.finish();
    }

    // An unset slot costs the binding neither a copy of the body nor a call into JavaScript.
    setBodyCallback(onBody: ((chunk: Buffer) => void) | null): void {
      this.native[ON_BODY] = onBody ?? undefined;
    }

    setMessageCompleteCallback(onComplete: (() => void) | null): void {
      this.native[ON_MESSAGE_COMPLETE] = onComplete ?? undefined;
    }

    // The binding's objects are not garbage-collected: node:http closes its parsers too.
    close(): void {
      this.native.close();
    }
  }

  return { name: 'builtin', create: (type, callbacks) => new BuiltinParser(type, callbacks) };
}
