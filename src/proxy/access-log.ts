// One JSON line per proxied request. Only non-secret facts are passed in: the proxy ID's prefix,
// never the ID, never the Authorization value, and the path with query values removed.
import { pino, type DestinationStream } from 'pino';
import { takesManyLinesPerWrite, type Logger } from '../lib/logger.js';

/** The fields of one access-log line. */
export interface AccessLogEntry {
  /** The request id (the caller's X-Request-Id, or the proxy's own): `reqId`, as in the API's lines. */
  reqId: string;
  /** Prefix of the proxy ID, or `none` when the request was refused before it was recognised. */
  proxyId: string;
  method: string;
  /** Path with query keys but no query values. */
  path: string;
  status: number;
  bytesIn: number;
  bytesOut: number;
  /** Milliseconds until the upstream's response headers; null when the request was not forwarded. */
  upstreamMs: number | null;
  totalMs: number;
  /** Why the proxy answered itself or cut the exchange short, when it did. */
  error?: string;
}

/** A batchable destination gets lines in batches of this many, or at least this often. */
const BATCH_LINES = 256;
const BATCH_MS = 100;

type Internals = Record<symbol, unknown>;

/**
 * Writes access-log lines. They are formatted here, exactly as pino would format them (level,
 * time, the logger's bindings, the fields, msg), and handed to the logger's destination in batches
 * (256 lines or 100 ms) when `createLogger` made it: pino's generic serialiser and a file write every
 * few lines cost more than much of a proxied request's own work. A batch's lines are formatted
 * together when it is written, not each amid its request: the same instructions, run in one loop
 * while their code and data stay in cache, cost less CPU per request.
 * Destinations that need pino's per-line metadata get pino's path.
 */
export class AccessLog {
  private readonly enabled: boolean;
  private readonly stream: DestinationStream | null;
  private readonly batch: boolean;
  private readonly head: string;
  private readonly bindings: string;
  /** Entries not yet written, and the `Date.now()` each was logged at. */
  private entries: AccessLogEntry[] = [];
  private times: number[] = [];
  /** `Date.now()` of the last line and its digits: consecutive lines mostly share a millisecond. */
  private lastTime = 0;
  private lastTimeText = '0';
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly logger: Logger) {
    this.enabled = logger.isLevelEnabled('info');
    const internals = logger as unknown as Internals;
    const stream = internals[pino.symbols.streamSym] as (DestinationStream & Internals) | undefined;
    const plain = stream !== undefined && stream[pino.symbols.needsMetadataGsym] !== true;
    this.stream = plain ? stream : null;
    this.batch = plain && takesManyLinesPerWrite(stream);
    this.head = `{"level":${logger.levels.values.info},"time":`;
    const bindings = internals[pino.symbols.chindingsSym];
    this.bindings = typeof bindings === 'string' ? bindings : '';
  }

  /** Logs one finished request. */
  write(e: AccessLogEntry): void {
    if (!this.enabled) return;
    if (this.stream === null) {
      this.logger.info(e, 'proxy request');
      return;
    }
    if (!this.batch) {
      this.stream.write(this.line(e, Date.now()));
      return;
    }
    this.entries.push(e);
    this.times.push(Date.now());
    if (this.entries.length >= BATCH_LINES) this.drain();
    else if (this.timer === null) {
      this.timer = setTimeout(this.drain, BATCH_MS);
      // Pending lines alone must not keep the process up; close() flushes them.
      this.timer.unref();
    }
  }

  /** Flushes buffered lines (before exit). */
  flush(): Promise<void> {
    this.drain();
    return new Promise((resolve) => this.logger.flush(() => resolve()));
  }

  private readonly drain = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const { entries, times } = this;
    if (entries.length === 0 || this.stream === null) return;
    this.entries = [];
    this.times = [];
    // A rope of the lines, flattened once by the stream's first pass over it (an array joined
    // instead cost more: measured with callgrind).
    let text = '';
    for (let i = 0; i < entries.length; i++)
      text += this.line(entries[i] as AccessLogEntry, times[i] as number);
    this.stream.write(text);
  };

  /** One entry's line, as pino would write it at `time`. */
  private line(e: AccessLogEntry, time: number): string {
    if (time !== this.lastTime) {
      this.lastTime = time;
      this.lastTimeText = String(time);
    }
    return (
      `${this.head}${this.lastTimeText}${this.bindings},"reqId":${jsonString(e.reqId)},"proxyId":${jsonString(e.proxyId)},` +
      `"method":${jsonString(e.method)},"path":${jsonString(e.path)},"status":${e.status},` +
      `"bytesIn":${e.bytesIn},"bytesOut":${e.bytesOut},"upstreamMs":${e.upstreamMs === null ? null : msText(e.upstreamMs)},"totalMs":${msText(e.totalMs)},` +
      `${e.error === undefined ? '' : `"error":${jsonString(e.error)},`}"msg":"proxy request"}\n`
    );
  }
}

/**
 * `JSON.stringify(s)` for a string: printable ASCII other than `"` and `\` is written between
 * quotes as it is (JSON.stringify would not change it either); anything else goes through
 * JSON.stringify. A request's values are nearly always plain, and the scan costs less than the call.
 */
export function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}

/**
 * `String(value)` for milliseconds rounded to microseconds (as `ms` makes them), from integers:
 * the shortest decimal of such a double is its whole milliseconds and up to three digits, so the
 * text is the same, without the general double-to-decimal conversion.
 */
export function msText(value: number): string {
  const us = Math.round(value * 1000);
  if (!(us >= 0 && us < 2 ** 31) || us / 1000 !== value) return String(value);
  const whole = Math.floor(us / 1000);
  const f = us % 1000;
  if (f === 0) return `${whole}`;
  if (f % 100 === 0) return `${whole}.${f / 100}`;
  if (f % 10 === 0) return `${whole}.${f < 100 ? '0' : ''}${f / 10}`;
  return `${whole}.${f < 10 ? '00' : f < 100 ? '0' : ''}${f}`;
}

/** Milliseconds rounded to microseconds, so lines stay short. */
export function ms(value: number): number {
  return Math.round(value * 1000) / 1000;
}
