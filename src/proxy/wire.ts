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

/** `HTTP/1.1 <status> <reason>\r\n`, with node's reason phrase when none is given. */
export function statusLine(status: number, reason: string | null | undefined): string {
  const text =
    reason === null || reason === undefined || reason === '' ? (STATUS_CODES[status] ?? '') : reason;
  return `HTTP/1.1 ${status} ${text}\r\n`;
}

/** The connection headers node:http adds to a response (its keep-alive timeout is 65 s here). */
export function connectionLines(keepAlive: boolean, keepAliveSeconds: number): string {
  return keepAlive
    ? `Connection: keep-alive\r\nKeep-Alive: timeout=${keepAliveSeconds}\r\n`
    : 'Connection: close\r\n';
}

/** The size line of one chunk of a chunked body. */
export const chunkHead = (length: number): string => `${length.toString(16)}\r\n`;
export const CRLF = '\r\n';
/** The last chunk (no trailers). */
export const LAST_CHUNK = '0\r\n\r\n';
