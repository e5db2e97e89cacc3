// Header handling on the hot path: one pass over the raw headers in each direction, dropping the
// hop-by-hop ones (RFC 9110 §7.6.1) and picking out what the checks need.

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

/** What the proxy reads from a request's headers while copying the forwardable ones. */
export interface RequestHeaderScan {
  /** Flat [name, value, name, value, …] as undici takes them; Host is left for undici to set. */
  forward: string[];
  /** The Authorization value; null when absent, undefined when sent more than once (ambiguous). */
  authorization: string | null | undefined;
  /** The X-PROXYVID value; null when absent, undefined when sent more than once. */
  proxyId: string | null | undefined;
  /** Declared body length, -1 when absent. */
  contentLength: number;
  /** Whether the request declares a body (Content-Length > 0 or Transfer-Encoding). */
  hasBody: boolean;
}

/** Splits a request's raw headers into the forwarded set and the values the checks need. */
export function scanRequestHeaders(raw: readonly string[]): RequestHeaderScan {
  const forward: string[] = [];
  let authorization: string | null | undefined = null;
  let proxyId: string | null | undefined = null;
  let contentLength = -1;
  let chunked = false;
  let connection: string | null = null;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    const value = raw[i + 1] as string;
    const lower = name.toLowerCase();
    switch (lower) {
      case 'authorization':
        authorization = authorization === null ? value : undefined;
        forward.push(name, value);
        continue;
      case 'x-proxyvid':
        proxyId = proxyId === null ? value : undefined;
        continue;
      // undici sets Host from the upstream origin; Expect was already answered by node's server.
      case 'host':
      case 'expect':
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
  return {
    forward: connection === null ? forward : dropNamed(forward, connection),
    authorization,
    proxyId,
    contentLength,
    hasBody: chunked || contentLength > 0,
  };
}

/** Turns undici's raw response headers into a flat list for `writeHead`, minus hop-by-hop ones. */
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
  if (PLAIN_CONNECTION.test(connection)) return flat;
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

/** The request path with query values removed (`/a?x=1&y=2` → `/a?x&y`), safe for logs. */
export function redactQuery(url: string): string {
  const q = url.indexOf('?');
  if (q < 0) return url;
  const query = url.slice(q + 1);
  if (query === '') return url.slice(0, q);
  const keys: string[] = [];
  for (const part of query.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    keys.push(eq < 0 ? part : part.slice(0, eq));
  }
  return `${url.slice(0, q)}?${keys.join('&')}`;
}
