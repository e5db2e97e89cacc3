// Answers of GET routes, kept per process for the credential and URL that asked, and sent again
// while the epochs read before the answer was made still hold: `identity` (migration 014: tokens,
// installations, workspaces, apps, users, keys) and `data` (migration 015: datasets, their schemas
// and tags, jobs and their status entries; a load's records through its dataset's row). Both are
// bumped by the database itself in the transaction that changes a row, so an answer is never sent
// once anything it was made of has changed, in this process or another. The credential is still
// authenticated on every request (expiry, revocation) before a kept answer is looked for.
//
// Only routes whose answer depends on nothing else opt in (`config: { readCache: true }`): not
// those that sign links with an expiry, and not those that read other tables.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, type Registry } from 'prom-client';
import type { Epochs } from '../domain/identity/credential-cache.js';
import { hashSecret } from '../lib/secrets.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The epochs read by the authentication hook, before anything else was read. */
    epochs: Epochs | null;
    /** Where this request's answer is kept, when its route opts in and none was kept yet. */
    readCacheKey: string | null;
  }
  interface FastifyContextConfig {
    /** The route's 200 answers may be kept and sent again while the epochs hold (read-cache.ts). */
    readCache?: boolean;
  }
}

interface Kept {
  identity: number;
  data: number;
  contentType: string;
  body: string;
}

/** Bounds: answers larger than this are not kept; all kept answers together stay below the total. */
const MAX_ANSWER_CHARS = 256 * 1024;
const MAX_TOTAL_CHARS = 16 * 1024 * 1024;

/** Kept answers by key, least recently used first (Map order). */
export class ReadCache {
  private readonly kept = new Map<string, Kept>();
  private chars = 0;

  constructor(
    private readonly maxTotalChars = MAX_TOTAL_CHARS,
    private readonly maxAnswerChars = MAX_ANSWER_CHARS,
  ) {}

  /** The answer kept under `key` for exactly these epochs, or undefined. */
  get(key: string, epochs: Epochs): Kept | undefined {
    const entry = this.kept.get(key);
    if (entry === undefined) return undefined;
    this.kept.delete(key);
    if (entry.identity !== epochs.identity || entry.data !== epochs.data) {
      this.chars -= entry.body.length;
      return undefined;
    }
    this.kept.set(key, entry);
    return entry;
  }

  /** Keeps an answer made after `epochs` were read. */
  set(key: string, epochs: Epochs, contentType: string, body: string): void {
    if (body.length > this.maxAnswerChars) return;
    this.delete(key);
    while (this.chars + body.length > this.maxTotalChars) {
      const oldest = this.kept.keys().next();
      if (oldest.done === true) break;
      this.delete(oldest.value);
    }
    this.kept.set(key, { identity: epochs.identity, data: epochs.data, contentType, body });
    this.chars += body.length;
  }

  /** How many answers are kept, and their size in characters. */
  size(): { answers: number; chars: number } {
    return { answers: this.kept.size, chars: this.chars };
  }

  private delete(key: string): void {
    const entry = this.kept.get(key);
    if (entry === undefined) return;
    this.kept.delete(key);
    this.chars -= entry.body.length;
  }
}

/** Declares the request properties; call once on the root instance. */
export function decorateReadCache(app: FastifyInstance): void {
  app.decorateRequest('epochs', null);
  app.decorateRequest('readCacheKey', null);
}

/**
 * Serves the opted-in GET routes of `scope` from `cache`. Register after the scope's
 * authentication hook, which reads the epochs (hooks run in the order they were added).
 */
export function serveFromReadCache(scope: FastifyInstance, cache: ReadCache, registry: Registry): void {
  const looks = new Counter({
    name: 'dx_api_kept_answers_total',
    help: 'GET requests of routes whose answers are kept: sent a kept answer (hit) or answered afresh (miss)',
    labelNames: ['result'] as const,
    registers: [registry],
  });
  scope.addHook('onRequest', async (request, reply) => {
    if (request.method !== 'GET' || request.routeOptions.config.readCache !== true) return;
    const epochs = request.epochs;
    if (epochs === null) return;
    const key = cacheKey(request);
    const hit = cache.get(key, epochs);
    if (hit === undefined) {
      looks.inc({ result: 'miss' });
      request.readCacheKey = key;
      return;
    }
    looks.inc({ result: 'hit' });
    await reply.type(hit.contentType).send(hit.body);
    return reply;
  });
  scope.addHook('onSend', async (request, reply, payload) => {
    const key = request.readCacheKey;
    const epochs = request.epochs;
    const contentType = reply.getHeader('content-type');
    if (
      key !== null &&
      epochs !== null &&
      reply.statusCode === 200 &&
      typeof payload === 'string' &&
      typeof contentType === 'string'
    ) {
      cache.set(key, epochs, contentType, payload);
    }
    return payload;
  });
}

/** The credential (hashed: kept answers hold no secret) and the URL as asked. */
function cacheKey(request: FastifyRequest): string {
  return `${hashSecret(request.headers.authorization ?? '')} ${request.url}`;
}
