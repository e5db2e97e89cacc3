// Fetches a caller-supplied URL for records:load without letting it reach internal networks:
// http(s) only, every resolved address checked (on every redirect hop), and the connection made to
// exactly the address that was checked (the check runs inside the socket's own DNS lookup), so a
// DNS answer that changes between check and connect (rebinding) cannot slip through.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { ByteLimit } from '../lib/byte-limit.js';
import {
  blockedHostName,
  blockedReason,
  hostAllowed,
  parseAllowlist,
  type Allowlist,
} from './address-policy.js';

/**
 * undici, loaded at the first fetch or webhook: a service that makes neither does not hold its
 * code (and, through it, Node.js's own copy) in memory.
 */
const undici = () => import('undici');

/** A fetch that cannot succeed; the message is safe to show (no query string). */
export class FetchRefused extends Error {}

export interface SafeFetchOptions {
  allowlist: readonly string[];
  maxBytes: number;
  signal?: AbortSignal;
  connectTimeoutMs?: number;
  /** Longest wait for response headers, and longest silence while reading the body. */
  idleTimeoutMs?: number;
  maxRedirects?: number;
}

/** The body of a fetched URL, limited to maxBytes. */
export interface FetchedSource {
  body: Readable;
  contentType: string | null;
  /** The Content-Length the server declared (bytes as sent, before any gunzip), or null. */
  size: number | null;
  /** The final URL without its query string, for messages. */
  shownUrl: string;
}

/** The origin and path of a URL: what may be logged or shown (queries hold signatures). */
export function shownUrl(url: string | URL): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** Fetches `url` with redirects followed by hand, each hop checked against the address policy. */
export async function safeFetch(url: string, options: SafeFetchOptions): Promise<FetchedSource> {
  const allow = parseAllowlist(options.allowlist);
  const refusal: { reason: string | null } = { reason: null };
  const { Agent, request } = await undici();
  const agent = new Agent({
    connect: { timeout: options.connectTimeoutMs ?? 10_000, lookup: guardedLookup(allow, refusal) },
    headersTimeout: options.idleTimeoutMs ?? 30_000,
    bodyTimeout: options.idleTimeoutMs ?? 30_000,
  });
  let current = parseHttpUrl(url);
  try {
    for (let hop = 0; ; hop++) {
      checkLiteralHost(current, allow);
      let res;
      try {
        res = await request(current, {
          dispatcher: agent,
          method: 'GET',
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
        });
      } catch (err) {
        if (refusal.reason !== null) throw new FetchRefused(refusal.reason);
        throw new FetchRefused(`could not fetch ${shownUrl(current)}: ${describe(err)}`);
      }
      if ([301, 302, 303, 307, 308].includes(res.statusCode)) {
        await res.body.dump();
        const location = res.headers.location;
        if (typeof location !== 'string') throw new FetchRefused(`redirect without a Location header`);
        if (hop >= (options.maxRedirects ?? 5)) throw new FetchRefused('too many redirects');
        current = parseHttpUrl(new URL(location, current).toString());
        continue;
      }
      if (res.statusCode < 200 || res.statusCode > 299) {
        await res.body.dump();
        throw new FetchRefused(`${shownUrl(current)} answered HTTP ${res.statusCode}`);
      }
      const length = Number(res.headers['content-length'] ?? NaN);
      if (Number.isFinite(length) && length > options.maxBytes) {
        res.body.destroy();
        throw new FetchRefused(`the file is larger than the limit of ${options.maxBytes} bytes`);
      }
      const type = res.headers['content-type'];
      // pipeline listens for errors on both streams, so an abort before the caller starts reading
      // (say, while it prepares its staging table) is kept for the reader, never thrown as uncaught.
      const body = new ByteLimit(
        options.maxBytes,
        (max) => new FetchRefused(`the file is larger than the limit of ${max} bytes`),
      );
      pipeline(res.body, body, () => undefined);
      body.on('close', () => void agent.close());
      return {
        body,
        contentType: typeof type === 'string' ? type : null,
        size: Number.isSafeInteger(length) && length >= 0 ? length : null,
        shownUrl: shownUrl(current),
      };
    }
  } catch (err) {
    await agent.destroy();
    throw err;
  }
}

function parseHttpUrl(value: string): URL {
  let u: URL;
  try {
    u = new URL(value);
  } catch {
    throw new FetchRefused('the URL is not valid');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new FetchRefused('only http(s) URLs are loaded');
  return u;
}

/** IP literals never go through DNS lookup, so they are checked here. */
function checkLiteralHost(u: URL, allow: Allowlist, allowName = 'LOAD_URL_ALLOWLIST'): void {
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const byName = blockedHostName(host, allow);
  if (byName !== null) throw new FetchRefused(`${host} is refused (${byName})`);
  if (isIP(host) !== 0 && !hostAllowed(host, allow)) {
    const why = blockedReason(host, allow);
    if (why !== null) throw new FetchRefused(`${host} is refused: ${why} address (not in ${allowName})`);
  }
}

/** Checks a destination URL ahead of time (a webhook being set): http(s), and its host neither a
 * refused name nor resolving to a refused address. Sending checks again (DNS may change). */
export async function checkDestination(
  url: string,
  allowlist: readonly string[],
  allowName: string,
): Promise<URL> {
  const allow = parseAllowlist(allowlist);
  const u = parseHttpUrl(url);
  checkLiteralHost(u, allow, allowName);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0 || hostAllowed(host, allow)) return u;
  let addresses: LookupAddress[];
  try {
    addresses = await dnsLookupAll(host);
  } catch {
    throw new FetchRefused(`${host} cannot be resolved`);
  }
  for (const a of addresses) {
    const why = blockedReason(a.address, allow);
    if (why !== null)
      throw new FetchRefused(`${host} resolves to ${a.address}, a ${why} address (not in ${allowName})`);
  }
  return u;
}

function dnsLookupAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) =>
    dnsLookup(host, { all: true }, (err, addresses: LookupAddress[]) =>
      err !== null ? reject(err) : resolve(addresses),
    ),
  );
}

export interface SafePostOptions {
  allowlist: readonly string[];
  /** The variable that holds the allowlist, named in refusals. */
  allowName: string;
  headers: Record<string, string>;
  body: string;
  /** The whole exchange (connect, send, response headers) must end within this. */
  timeoutMs: number;
}

/** POSTs `body` to a checked destination without following redirects; resolves with the response
 * status (its body is discarded), or throws FetchRefused (refused address, timeout, network). */
export async function safePost(url: string, options: SafePostOptions): Promise<number> {
  const allow = parseAllowlist(options.allowlist);
  const refusal: { reason: string | null } = { reason: null };
  const target = parseHttpUrl(url);
  checkLiteralHost(target, allow, options.allowName);
  const { Agent, request } = await undici();
  const agent = new Agent({
    connect: {
      timeout: options.timeoutMs,
      lookup: guardedLookup(allow, refusal, options.allowName),
    },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
  });
  try {
    const res = await request(target, {
      dispatcher: agent,
      method: 'POST',
      headers: options.headers,
      body: options.body,
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    await res.body.dump();
    return res.statusCode;
  } catch (err) {
    if (refusal.reason !== null) throw new FetchRefused(refusal.reason);
    if (err instanceof Error && (err.name === 'TimeoutError' || /timeout/i.test(err.name))) {
      throw new FetchRefused(`no answer from ${shownUrl(target)} within ${options.timeoutMs} ms`);
    }
    throw new FetchRefused(`could not reach ${shownUrl(target)}: ${describe(err)}`);
  } finally {
    await agent.destroy();
  }
}

/** A DNS lookup that refuses names resolving to any blocked address. */
function guardedLookup(
  allow: Allowlist,
  refusal: { reason: string | null },
  allowName = 'LOAD_URL_ALLOWLIST',
): LookupFunction {
  return (hostname, options, callback) => {
    dnsLookup(hostname, { all: true, family: options.family ?? 0 }, (err, addresses: LookupAddress[]) => {
      if (err !== null) return callback(err, '', 0);
      const byName = hostAllowed(hostname, allow);
      for (const a of addresses) {
        const why = byName ? null : blockedReason(a.address, allow);
        if (why !== null) {
          refusal.reason = `${hostname} resolves to ${a.address}, a ${why} address (not in ${allowName})`;
          return callback(new Error(refusal.reason), '', 0);
        }
      }
      const first = addresses[0];
      if (first === undefined) return callback(new Error(`${hostname} has no address`), '', 0);
      // Node asks for every address when it races IPv4 and IPv6 (autoSelectFamily).
      if (options.all === true)
        (callback as unknown as (e: null, a: LookupAddress[]) => void)(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = err.cause instanceof Error ? `: ${err.cause.message}` : '';
  return `${err.message}${cause}`;
}
