// What the HTTP layer works with: the configuration and the process's services.
import type { Kysely } from 'kysely';
import type { Config } from '../config.js';
import type { Services } from '../domain/services.js';
import type { Tables } from '../storage/db/tables.js';
import type { AccessTokenCache, TokenMinting } from '../domain/identity/access-tokens.js';
import type { AppJwtCache } from '../domain/identity/app-jwt.js';
import type { ReadCache } from './read-cache.js';
import type { DownloadSlots } from './download-slots.js';
import type { SharedEpochReads } from '../domain/identity/epoch-reads.js';

/** What this process's credentials resolved to, reused while the identity epoch holds. */
export interface CredentialCaches {
  accessTokens: AccessTokenCache;
  appJwts: AppJwtCache;
}

export interface ApiDeps extends Services {
  config: Config;
  /** The metadata database's query builder (services.database.db). */
  db: Kysely<Tables>;
  credentials: CredentialCaches;
  /** The change epochs, read once for all the requests that arrived before the read began. */
  epochReads: SharedEpochReads;
  /** The token rows this process writes, and the installations its mints resolved. */
  minting: TokenMinting;
  /** GET answers reused while the epochs hold (read-cache.ts). */
  readCache: ReadCache;
  /** The exports streaming now, the API's and the console's (download-slots.ts). */
  downloads: DownloadSlots;
  /** More Prometheus text for /metrics (the proxy's cluster workers). */
  extraMetrics?: () => Promise<string>;
  /** Whether the process is shutting down (/readyz then answers 503). */
  draining?: () => boolean;
  /** /metrics is served on an admin port of its own, not on the API's. */
  metricsOnAdminPort?: boolean;
}

import type {
  FastifyBaseLogger,
  FastifyInstance,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';

/** A Fastify instance whose route schemas are TypeBox types. */
export type TypedApp = FastifyInstance<
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  FastifyBaseLogger,
  TypeBoxTypeProvider
>;
