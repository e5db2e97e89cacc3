// The proxy's rate-limit buckets, shared by every proxy process on this database: one row per proxy
// ID (its prefix) that has sent requests. Proxy processes report to it a few times a second while
// requests come (src/proxy/shared-rate.ts); nothing else reads it.
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createTable('proxy_rate_buckets')
      .addColumn('proxy_id', 'text', (c) => c.primaryKey())
      // Negative when the processes together admitted more than the bucket held (a debt).
      .addColumn('tokens', 'double precision', (c) => c.notNull())
      // Wall-clock milliseconds of the last refill.
      .addColumn('refilled_at', 'double precision', (c) => c.notNull())
      .execute();
  },
};
