// Header handling on the hot path: one pass over the raw headers in each direction, dropping the
// hop-by-hop ones (RFC 9110 §7.6.1) and picking out what the checks need.
import { isSafeRequestId } from '../lib/request-id.js';

/** Headers that describe one connection, never forwarded in either direction. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
]);

const PLAIN_CONNECTION = /^\s*(keep-alive|close)\s*$/i;

/** The names a caller may send its proxy ID under; the interface's own first. */
export type ProxyIdHeader = 'X-PROXYVID' | 'X-MIGVID';

/** What the proxy reads from a request's headers while copying the forwardable ones. */
export interface RequestHeaderScan {
  /** Flat [name, value, name, value, …] to send upstream; Host is set to the upstream's. */
  forward: string[];
  /** The Authorization value; null when absent, undefined when sent more than once (ambiguous). */
  authorization: string | null | undefined;
  /**
   * The proxy ID, from X-PROXYVID or X-MIGVID (its name for existing DXAPI callers); null when
   * absent, undefined when ambiguous (a header sent twice, or the two naming different IDs).
   */
  proxyId: string | null | undefined;
  /** The header the caller used for its proxy ID, so an error can name it. */
  proxyIdHeader: ProxyIdHeader;
  /** Declared body length, -1 when absent. */
  contentLength: number;
  /** Whether the request declares a body (Content-Length > 0 or Transfer-Encoding). */
  hasBody: boolean;
  /** Whether it is chunked (Transfer-Encoding; the parser accepts no other coding on requests). */
  chunked: boolean;
  /** Whether a Host header was sent (HTTP/1.1 requires one). */
  hasHost: boolean;
  /** The Expect value (answered by the proxy, never forwarded); null when absent. */
  expect: string | null;
  /**
   * The caller's X-Request-Id when it is safe (visible ASCII, at most 200 characters; the first
   * one if sent twice), already in `forward`; null otherwise (the proxy then makes one up).
   */
  requestId: string | null;
}

/** Splits a request's raw headers into the forwarded set and the values the checks need. */
export function scanRequestHeaders(raw: readonly string[]): RequestHeaderScan {
  const forward: string[] = [];
  let authorization: string | null | undefined = null;
  let proxyVid: string | null | undefined = null;
  let migVid: string | null | undefined = null;
  let contentLength = -1;
  let chunked = false;
  let hasHost = false;
  let expect: string | null = null;
  let connection: string | null = null;
  let requestId: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    switch (lower) {
      // Exactly one X-Request-Id goes upstream: the caller's if safe, else the proxy's own.
      case 'x-request-id':
        if (requestId === null && isSafeRequestId(value)) {
          requestId = value;
          forward.push(name, value);
        }
        continue;
      case 'authorization':
        authorization = authorization === null ? value : undefined;
        forward.push(name, value);
        continue;
      case 'x-proxyvid':
        proxyVid = proxyVid === null ? value : undefined;
        continue;
      case 'x-migvid':
        migVid = migVid === null ? value : undefined;
        continue;
      // Host becomes the upstream's; Expect is answered by the proxy itself.
      case 'host':
        hasHost = true;
        continue;
      case 'expect':
        expect = expect === null ? value : `${expect},${value}`;
        continue;
      case 'content-length':
        contentLength = Number(value);
        forward.push(name, value);
        continue;
      case 'transfer-encoding':
        chunked = true;
        continue;
      case 'connection':
        connection = connection === null ? value : `${connection},${value}`;
        continue;
      default:
        if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-')) continue;
        forward.push(name, value);
    }
  }
  const kept = connection === null ? forward : dropNamed(forward, connection);
  // A Connection header that names X-Request-Id removes it: the proxy then sends its own.
  if (
    kept !== forward &&
    requestId !== null &&
    !kept.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'x-request-id')
  )
    requestId = null;
  return {
    forward: kept,
    authorization,
    proxyId: migVid === null ? proxyVid : proxyVid === null || proxyVid === migVid ? migVid : undefined,
    proxyIdHeader: migVid !== null && proxyVid === null ? 'X-MIGVID' : 'X-PROXYVID',
    contentLength,
    hasBody: chunked || contentLength > 0,
    chunked,
    hasHost,
    expect,
    requestId,
  };
}

/** What the proxy needs from an upstream response's headers besides the forwardable ones. */
export interface ResponseHeaderScan {
  /** Flat [name, value, …] to send to the client, minus hop-by-hop headers. */
  forward: string[];
  /** Whether the response declares its length (otherwise it is chunked or ends with the connection). */
  hasContentLength: boolean;
  /** Whether it carries a Date header (else the proxy adds one, as node:http does). */
  hasDate: boolean;
  /** Whether it carries X-Request-Id (else the proxy returns the request's own). */
  hasRequestId: boolean;
  /** The upstream's idle timeout from `Keep-Alive: timeout=N`, in ms; -1 when not given. */
  keepAliveMs: number;
}

const KEEP_ALIVE_TIMEOUT = /(?:^|[\s,;])timeout\s*=\s*(\d+)/i;

// An upstream sends the same Keep-Alive value on every response: its timeout is parsed once.
let lastKeepAlive = '';
let lastKeepAliveMs = -1;

/** The timeout of a `Keep-Alive` value in ms, -1 when it names none. */
function keepAliveTimeoutMs(value: string): number {
  if (value !== lastKeepAlive) {
    const m = KEEP_ALIVE_TIMEOUT.exec(value);
    lastKeepAliveMs = m === null ? -1 : Number(m[1]) * 1000;
    lastKeepAlive = value;
  }
  return lastKeepAliveMs;
}

/** Splits an upstream response's raw headers (strings, as the parser gives them) for the client. */
export function scanResponseHeaders(raw: readonly string[]): ResponseHeaderScan {
  const out: string[] = [];
  let connection: string | null = null;
  let hasContentLength = false;
  let hasDate = false;
  let hasRequestId = false;
  let keepAliveMs = -1;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    switch (lower) {
      case 'content-length':
        hasContentLength = true;
        break;
      case 'date':
        hasDate = true;
        break;
      case 'x-request-id':
        hasRequestId = true;
        break;
      case 'connection':
        connection = connection === null ? value : `${connection},${value}`;
        continue;
      case 'keep-alive': {
        const timeout = keepAliveTimeoutMs(value);
        if (timeout >= 0) keepAliveMs = timeout;
        continue;
      }
      default:
        if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-')) continue;
    }
    out.push(name, value);
  }
  const forward = connection === null ? out : dropNamed(out, connection);
  // A Connection header may name Content-Length too: then the length is not forwarded either.
  if (forward !== out)
    hasContentLength = forward.some((h, i) => i % 2 === 0 && h.toLowerCase() === 'content-length');
  return {
    forward,
    hasContentLength,
    hasDate,
    hasRequestId,
    keepAliveMs,
  };
}

/** Turns raw response headers (buffers or strings) into a flat list, minus hop-by-hop ones. */
export function responseHeaders(raw: readonly (Buffer | string)[]): string[] {
  const out: string[] = [];
  let connection: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i]!.toString('latin1');
    const value = raw[i + 1]!.toString('latin1');
    const lower = name.toLowerCase();
    if (lower === 'connection') {
      connection = connection === null ? value : `${connection},${value}`;
      continue;
    }
    if (HOP_BY_HOP.has(lower) || lower.startsWith('proxy-')) continue;
    out.push(name, value);
  }
  return connection === null ? out : dropNamed(out, connection);
}

/** Removes the headers a Connection header names (they are hop-by-hop for this connection). */
function dropNamed(flat: string[], connection: string): string[] {
  // The usual values name no other header; skip the split on the hot path.
  if (connection === 'keep-alive' || connection === 'close' || PLAIN_CONNECTION.test(connection)) return flat;
  const named = new Set(
    connection
      .split(',')
      .map((t) => t.trim().toLowerCase())
      .filter((t) => t !== ''),
  );
  if (named.size === 0) return flat;
  const out: string[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) {
    const name = flat[i] as string;
    // A client must not be able to hide its credentials from the checks by naming them here.
    const lower = name.toLowerCase();
    if (named.has(lower) && lower !== 'authorization') continue;
    out.push(name, flat[i + 1] as string);
  }
  return out;
}
