// One JSON line per proxied request. Only non-secret facts are passed in: the proxy ID's prefix,
// never the ID, never the Authorization value, and the path with query values removed.
import { BatchedLines, jsonString } from '../lib/batched-lines.js';
import type { Logger } from '../lib/logger.js';

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

/**
 * Writes access-log lines, formatted here exactly as pino would format them and batched
 * (src/lib/batched-lines.ts) when `createLogger` made the destination: pino's generic serialiser
 * and a file write every few lines cost more than much of a proxied request's own work.
 * Destinations that need pino's per-line metadata get pino's path.
 */
export class AccessLog {
  private readonly lines: BatchedLines<AccessLogEntry>;

  constructor(private readonly logger: Logger) {
    this.lines = new BatchedLines(logger, line);
  }

  /** Logs one finished request. */
  write(e: AccessLogEntry): void {
    if (!this.lines.enabled) return;
    if (this.lines.formatsHere) this.lines.write(e);
    else this.logger.info(e, 'proxy request');
  }

  /** Flushes buffered lines (before exit). */
  flush(): Promise<void> {
    return this.lines.flush();
  }
}

/** One entry's line, as pino would write it after `head` (level, time, bindings). */
function line(e: AccessLogEntry, head: string): string {
  return (
    `${head},"reqId":${jsonString(e.reqId)},"proxyId":${jsonString(e.proxyId)},` +
    `"method":${jsonString(e.method)},"path":${jsonString(e.path)},"status":${e.status},` +
    `"bytesIn":${e.bytesIn},"bytesOut":${e.bytesOut},"upstreamMs":${e.upstreamMs === null ? null : msText(e.upstreamMs)},"totalMs":${msText(e.totalMs)},` +
    `${e.error === undefined ? '' : `"error":${jsonString(e.error)},`}"msg":"proxy request"}\n`
  );
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
