// What the HTTP layer needs from the composition root.
import type { Kysely } from 'kysely';
import type { Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { Database } from '../storage/db/database.js';
import type { DatasetRow, Tables } from '../storage/db/tables.js';

export interface ApiDeps {
  config: Config;
  database: Database;
  db: Kysely<Tables>;
  /** Prometheus registry shared by every role of the process. */
  metrics: Registry;
  /** More Prometheus text for /metrics (the proxy's cluster workers). */
  extraMetrics?: () => Promise<string>;
  /** Drops a deleted dataset's record tables and files (set when the loading feature is wired). */
  onDatasetDeleted?: (row: DatasetRow) => Promise<void>;
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
