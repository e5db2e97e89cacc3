// Backend "wasm": llhttp compiled to WebAssembly, the build undici ships (undici is a dependency)
// and drives for its own client. No Node.js internal: this runs wherever WebAssembly does. It
// reports as Node's binding does (builtin.ts), and adds what that binding adds to llhttp: the
// limit on a head's size (node:http's maxHeaderSize) and the trimming of header values.
import { maxHeaderSize } from 'node:http';
import { createRequire } from 'node:module';
import {
  parseError,
  type HttpParser,
  type ParseError,
  type ParserBackend,
  type ParserCallbacks,
  type ParserType,
} from './parser.js';

/** The part of the WebAssembly global used here (this project's type libraries lack it). */
interface WebAssemblyApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: object };
}
const { WebAssembly } = globalThis as unknown as { WebAssembly: WebAssemblyApi };

/** The exports of undici's llhttp build used here (see llhttp.h). */
interface LlhttpExports {
  memory: { buffer: ArrayBuffer };
  malloc(size: number): number;
  free(ptr: number): void;
  llhttp_alloc(type: number): number;
  llhttp_free(parser: number): void;
  llhttp_execute(parser: number, data: number, length: number): number;
  llhttp_finish(parser: number): number;
  llhttp_resume_after_upgrade(parser: number): void;
  llhttp_get_upgrade(parser: number): number;
  llhttp_get_method(parser: number): number;
  llhttp_get_http_major(parser: number): number;
  llhttp_get_http_minor(parser: number): number;
  llhttp_get_error_pos(parser: number): number;
  llhttp_get_error_reason(parser: number): number;
  llhttp_errno_name(errno: number): number;
}

// llhttp_errno_t values.
const HPE_OK = 0;
const HPE_PAUSED_UPGRADE = 22;
const HPE_USER = 24;

/** The one llhttp instance all parsers of this process share (as undici's client does). */
class Llhttp {
  private readonly exports: LlhttpExports;
  /** The instance's memory as a Buffer (renewed when the memory grows). */
  private memory: Buffer;
  /** The parser whose `execute` or `finish` runs (the callbacks carry only its address). */
  current: WasmParser | null = null;
  /** Where reads are copied for llhttp, and its size. */
  private input = 0;
  private inputSize = 0;
  /** The input area is in use (an `execute` inside another's callback takes its own). */
  private inputBusy = false;

  constructor() {
    const require = createRequire(import.meta.url);
    let bytes: Buffer;
    let module: object;
    try {
      // The SIMD build is the faster; undici falls back to the plain one where SIMD is missing.
      bytes = require('undici/lib/llhttp/llhttp_simd-wasm.js') as Buffer;
      module = new WebAssembly.Module(bytes);
    } catch {
      bytes = require('undici/lib/llhttp/llhttp-wasm.js') as Buffer;
      module = new WebAssembly.Module(bytes);
    }
    const instance = new WebAssembly.Instance(module, { env: this.imports() });
    this.exports = instance.exports as unknown as LlhttpExports;
    this.memory = Buffer.from(this.exports.memory.buffer);
  }

  get api(): LlhttpExports {
    return this.exports;
  }

  /** Memory bytes [at, at + length) as a string (llhttp's spans; latin1, as Node's binding). */
  text(at: number, length: number): string {
    return this.memory.toString('latin1', at, at + length);
  }

  /** A copy of memory bytes [at, at + length) (a body chunk outlives the read). */
  copy(at: number, length: number): Buffer {
    return Buffer.from(this.memory.subarray(at, at + length));
  }

  /** The NUL-terminated string at `at`. */
  cString(at: number): string {
    return at === 0 ? '' : this.memory.toString('latin1', at, this.memory.indexOf(0, at));
  }

  allocParser(type: number): number {
    const ptr = this.exports.llhttp_alloc(type);
    this.refresh();
    return ptr;
  }

  /** Copies `data` into the instance's memory; returns where (give it back with `releaseInput`). */
  takeInput(data: Buffer): number {
    if (this.inputBusy) {
      const ptr = this.exports.malloc(Math.max(1, data.length));
      this.refresh();
      this.memory.set(data, ptr);
      return ptr;
    }
    this.inputBusy = true;
    if (data.length > this.inputSize) {
      if (this.input !== 0) this.exports.free(this.input);
      this.inputSize = Math.ceil(data.length / 65536) * 65536;
      this.input = this.exports.malloc(this.inputSize);
      this.refresh();
    }
    this.memory.set(data, this.input);
    return this.input;
  }

  releaseInput(ptr: number): void {
    if (ptr === this.input) this.inputBusy = false;
    else this.exports.free(ptr);
  }

  /** Malloc may have grown the memory, which detaches the old buffer. */
  private refresh(): void {
    if (this.memory.buffer !== this.exports.memory.buffer)
      this.memory = Buffer.from(this.exports.memory.buffer);
  }

  private imports(): Record<string, (...args: number[]) => number> {
    return {
      wasm_on_message_begin: () => this.current?.onMessageBegin() ?? 0,
      wasm_on_url: (_p, at, length) => this.current?.onUrl(at, length) ?? 0,
      wasm_on_status: (_p, at, length) => this.current?.onStatus(at, length) ?? 0,
      wasm_on_header_field: (_p, at, length) => this.current?.onHeaderField(at, length) ?? 0,
      wasm_on_header_value: (_p, at, length) => this.current?.onHeaderValue(at, length) ?? 0,
      wasm_on_headers_complete: (_p, status, upgrade, keepAlive) =>
        this.current?.onHeadersComplete(status, upgrade === 1, keepAlive === 1) ?? 0,
      wasm_on_body: (_p, at, length) => this.current?.onBody(at, length) ?? 0,
      wasm_on_message_complete: () => this.current?.onMessageComplete() ?? 0,
    };
  }
}

let llhttp: Llhttp | null = null;

type OnHeadersComplete = (
  major: number,
  minor: number,
  headers: string[],
  method: number | undefined,
  url: string | undefined,
  status: number | undefined,
  reason: string | undefined,
  upgrade: boolean,
  keepAlive: boolean,
) => unknown;

/** One parser on the shared instance, reporting as Node's binding does. */
class WasmParser implements HttpParser {
  private ptr: number;
  private readonly onHeaders: ((headers: string[], url: string) => void) | undefined;
  private readonly onHeadersCompleteCb: OnHeadersComplete;
  private onBodyCb: ((chunk: Buffer) => void) | undefined;
  private onMessageCompleteCb: (() => void) | undefined;
  /** Header (or trailer) names and values so far, alternating; a span may come in pieces. */
  private fields: string[] = [];
  private url = '';
  private statusText = '';
  /** Bytes of the head so far (URL or status, names, values), against maxHeaderSize. */
  private headBytes = 0;
  /** An error of ours (the head's size) that a callback reported to llhttp as HPE_USER. */
  private userError: string | null = null;

  constructor(
    private readonly engine: Llhttp,
    private readonly type: ParserType,
    callbacks: ParserCallbacks,
  ) {
    this.ptr = engine.allocParser(type);
    this.onHeaders = callbacks.onHeaders as typeof this.onHeaders;
    this.onHeadersCompleteCb = callbacks.onHeadersComplete as OnHeadersComplete;
    this.onBodyCb = callbacks.onBody as typeof this.onBodyCb;
    this.onMessageCompleteCb = callbacks.onMessageComplete;
  }

  execute(data: Buffer): number | ParseError {
    // Closed: nothing is read (as Node's binding does nothing on a closed parser).
    if (this.ptr === 0) return 0;
    const engine = this.engine;
    const input = engine.takeInput(data);
    const outer = engine.current;
    engine.current = this;
    let err: number;
    try {
      err = engine.api.llhttp_execute(this.ptr, input, data.length);
    } finally {
      engine.current = outer;
      engine.releaseInput(input);
    }
    if (err === HPE_OK) return data.length;
    const api = engine.api;
    const parsed = api.llhttp_get_error_pos(this.ptr) - input;
    // Not an error: llhttp stops after a message that switches protocols.
    if (err === HPE_PAUSED_UPGRADE) {
      api.llhttp_resume_after_upgrade(this.ptr);
      return parsed;
    }
    if (api.llhttp_get_upgrade(this.ptr) === 1) return parsed;
    return this.error(err, parsed);
  }

  finish(): ParseError | undefined {
    if (this.ptr === 0) return undefined;
    const engine = this.engine;
    const outer = engine.current;
    engine.current = this;
    let err: number;
    try {
      err = engine.api.llhttp_finish(this.ptr);
    } finally {
      engine.current = outer;
    }
    // As in `execute`, nothing is an error once the protocol switched.
    if (err === HPE_OK || err === HPE_PAUSED_UPGRADE || engine.api.llhttp_get_upgrade(this.ptr) === 1)
      return undefined;
    return this.error(err, 0);
  }

  setBodyCallback(onBody: ((chunk: Buffer) => void) | null): void {
    this.onBodyCb = onBody ?? undefined;
  }

  setMessageCompleteCallback(onComplete: (() => void) | null): void {
    this.onMessageCompleteCb = onComplete ?? undefined;
  }

  close(): void {
    if (this.ptr === 0) return;
    this.engine.api.llhttp_free(this.ptr);
    this.ptr = 0;
  }

  private error(errno: number, bytesParsed: number): ParseError {
    const api = this.engine.api;
    if (errno === HPE_USER && this.userError !== null) {
      const [code = '', reason = ''] = this.userError.split(':');
      return parseError(code, reason, bytesParsed);
    }
    const code = this.engine.cString(api.llhttp_errno_name(errno));
    return parseError(code, this.engine.cString(api.llhttp_get_error_reason(this.ptr)), bytesParsed);
  }

  // The callbacks from llhttp. A non-zero result stops it with that error.

  onMessageBegin(): number {
    if (this.fields.length > 0) this.fields = [];
    this.url = '';
    this.statusText = '';
    return 0;
  }

  /** Counts a span of the head against the limit, as Node's binding does. */
  private track(length: number): number {
    this.headBytes += length;
    if (this.headBytes < maxHeaderSize) return 0;
    this.userError = 'HPE_HEADER_OVERFLOW:Header overflow';
    return HPE_USER;
  }

  onUrl(at: number, length: number): number {
    const stop = this.track(length);
    if (stop === 0) this.url += this.engine.text(at, length);
    return stop;
  }

  onStatus(at: number, length: number): number {
    const stop = this.track(length);
    if (stop === 0) this.statusText += this.engine.text(at, length);
    return stop;
  }

  onHeaderField(at: number, length: number): number {
    return this.addFieldPart(at, length, 0);
  }

  onHeaderValue(at: number, length: number): number {
    return this.addFieldPart(at, length, 1);
  }

  /**
   * A piece of a header name (`parity` 0) or value (1) in `fields`, names and values alternating:
   * a name starts after a value (or first), a value after a name; otherwise the piece continues
   * the last entry, which llhttp may deliver in several callbacks.
   */
  private addFieldPart(at: number, length: number, parity: 0 | 1): number {
    const stop = this.track(length);
    if (stop !== 0) return stop;
    const fields = this.fields;
    const text = this.engine.text(at, length);
    if (fields.length % 2 === parity) fields.push(text);
    else fields[fields.length - 1] += text;
    return 0;
  }

  /** The names and values so far, values without trailing blanks (as Node's binding gives them). */
  private takeFields(): string[] {
    const fields = this.fields;
    this.fields = [];
    // A name whose value never came is left out, as Node's binding does.
    if (fields.length % 2 === 1) fields.pop();
    for (let i = 1; i < fields.length; i += 2) {
      const v = fields[i] as string;
      const last = v.charCodeAt(v.length - 1);
      if (last === 32 || last === 9) fields[i] = v.replace(/[ \t]+$/, '');
    }
    return fields;
  }

  onHeadersComplete(status: number, upgrade: boolean, keepAlive: boolean): number {
    this.headBytes = 0;
    const api = this.engine.api;
    const request = this.type === 1;
    const r = this.onHeadersCompleteCb(
      api.llhttp_get_http_major(this.ptr),
      api.llhttp_get_http_minor(this.ptr),
      this.takeFields(),
      request ? api.llhttp_get_method(this.ptr) : undefined,
      request ? this.url : undefined,
      request ? undefined : status,
      request ? undefined : this.statusText,
      upgrade,
      keepAlive,
    );
    return typeof r === 'number' ? r : 0;
  }

  onBody(at: number, length: number): number {
    const onBody = this.onBodyCb;
    if (onBody !== undefined && length > 0) onBody(this.engine.copy(at, length));
    return 0;
  }

  onMessageComplete(): number {
    // Trailers go to onHeaders, with the URL, as Node's binding flushes them.
    if (this.fields.length > 0) {
      const trailers = this.takeFields();
      this.onHeaders?.(trailers, this.url);
    }
    this.onMessageCompleteCb?.();
    return 0;
  }
}

/** llhttp in WebAssembly as a backend (the instance is made on first use). */
export function loadWasmBackend(): ParserBackend {
  return {
    name: 'wasm',
    create: (type, callbacks) => new WasmParser((llhttp ??= new Llhttp()), type, callbacks),
  };
}
