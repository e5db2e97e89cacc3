// The one place requests are made: the platform's fetch (undici in Node.js), JSON in and out,
// problems thrown as DxProblemError. Credentials come from a function per request, so a cached
// token is refreshed in one place (tokens.ts).
import { problemFromResponse } from './problem.js';

/** The fetch function the client uses (the global one by default). */
export type FetchLike = (input: string | URL, init?: RequestInit) => Promise<Response>;

/** Query parameters; undefined values are left out. */
export type Query = Record<string, string | number | boolean | undefined>;

export interface RequestOptions {
  query?: Query;
  /** A JSON body. */
  json?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
}

/** Gives the bearer credential of a request; `stale` asks for a fresh one after a 401. */
export type Credential = (stale?: string) => Promise<string>;

/** `http://host:8080` or `http://host:8080/api/v1` → the API's base, without a trailing slash. */
export function apiBaseOf(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  return trimmed.endsWith('/api/v1') ? trimmed : `${trimmed}/api/v1`;
}

/** Builds `base + path?query`. */
export function urlOf(base: string, path: string, query: Query = {}): string {
  const url = new URL(`${base}${path}`);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url.toString();
}

/** Sends requests to /api/v1 with a bearer credential. */
export class Transport {
  constructor(
    readonly base: string,
    readonly fetch: FetchLike,
    private readonly credential: Credential,
    private readonly userAgent: string,
  ) {}

  /** A JSON request; the parsed body of a 2xx (null for 204), or a DxProblemError. */
  async json<T>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
    const res = await this.send(method, path, options);
    if (res.status === 204) return null as T;
    return (await res.json()) as T;
  }

  /** A request whose 2xx response the caller reads; non-2xx is thrown as a DxProblemError. */
  async send(method: string, path: string, options: RequestOptions = {}): Promise<Response> {
    let token = await this.credential();
    let res = await this.once(method, path, token, options);
    // A token revoked or expired early: one fresh token, one more try (JSON bodies replay safely).
    if (res.status === 401) {
      const fresh = await this.credential(token);
      if (fresh !== token) {
        await res.body?.cancel();
        token = fresh;
        res = await this.once(method, path, token, options);
      }
    }
    if (!res.ok)
      throw await problemFromResponse(
        res,
        `${method} ${new URL(res.url || urlOf(this.base, path)).pathname}`,
      );
    return res;
  }

  private once(method: string, path: string, token: string, options: RequestOptions): Promise<Response> {
    const headers: Record<string, string> = {
      accept: 'application/json, application/problem+json',
      authorization: `Bearer ${token}`,
      'user-agent': this.userAgent,
      ...options.headers,
    };
    if (options.json !== undefined) headers['content-type'] = 'application/json';
    return this.fetch(urlOf(this.base, path, options.query), {
      method,
      headers,
      ...(options.json !== undefined ? { body: JSON.stringify(options.json) } : {}),
      ...(options.signal !== undefined ? { signal: options.signal } : {}),
    });
  }
}

/** A signed URL's `METHOD path` for messages: its query is the credential and never shown. */
export function describeSigned(method: string, url: string): string {
  return `${method} ${new URL(url).pathname}`;
}

/** Resolves after `ms`, or rejects when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) {
      reject(signal.reason as Error);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** An API timestamp (UTC, written without a zone suffix) in epoch milliseconds. */
export function parseApiTimestamp(value: string): number {
  return Date.parse(/(Z|[+-]\d\d:?\d\d)$/.test(value) ? value : `${value}Z`);
}
