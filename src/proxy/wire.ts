// Small pieces of HTTP/1.1 wire format the proxy writes itself (heads, chunk framing, Date).
import { STATUS_CODES } from 'node:http';

let dateSecond = -1;
let dateValue = '';

/** The current time as an HTTP date, computed at most once a second (node:http caches it too). */
export function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateValue = new Date(now).toUTCString();
  }
  return dateValue;
}

// An upstream answers with the same few status lines over and over: the last one is kept.
let lastStatus = -1;
let lastReason: string | null | undefined = null;
let lastStatusLine = '';

/** `HTTP/1.1 <status> <reason>\r\n`, with node's reason phrase when none is given. */
export function statusLine(status: number, reason: string | null | undefined): string {
  if (status === lastStatus && reason === lastReason) return lastStatusLine;
  const text =
    reason === null || reason === undefined || reason === '' ? (STATUS_CODES[status] ?? '') : reason;
  lastStatus = status;
  lastReason = reason;
  lastStatusLine = `HTTP/1.1 ${status} ${text}\r\n`;
  return lastStatusLine;
}

let keepAliveFor = -1;
let keepAliveLines = '';

/** The connection headers node:http adds to a response (its keep-alive timeout is 65 s here). */
export function connectionLines(keepAlive: boolean, keepAliveSeconds: number): string {
  if (!keepAlive) return 'Connection: close\r\n';
  if (keepAliveSeconds !== keepAliveFor) {
    keepAliveFor = keepAliveSeconds;
    keepAliveLines = `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds}\r\n`;
  }
  return keepAliveLines;
}

/** The size line of one chunk of a chunked body. */
export const chunkHead = (length: number): string => `${length.toString(16)}\r\n`;
export const CRLF = '\r\n';
/** The last chunk (no trailers). */
export const LAST_CHUNK = '0\r\n\r\n';

/** Flat [name, value, name, value, …] as header lines. */
export function headerLines(flat: readonly string[]): string {
  let lines = '';
  for (let i = 0; i + 1 < flat.length; i += 2) lines += `${flat[i]}: ${flat[i + 1]}\r\n`;
  return lines;
}

/**
 * The head of a request as sent upstream: the target under the upstream's base path, its Host,
 * the forwarded headers, and the framing of the body (chunked or as declared).
 */
export function upstreamRequestHead(
  method: string,
  target: string,
  host: string,
  forward: readonly string[],
  chunked: boolean,
): string {
  return (
    `${method} ${target} HTTP/1.1\r\nHost: ${host}\r\n${headerLines(forward)}` +
    (chunked
      ? 'Transfer-Encoding: chunked\r\nConnection: keep-alive\r\n\r\n'
      : 'Connection: keep-alive\r\n\r\n')
  );
}
