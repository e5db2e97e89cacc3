// Idempotency keys (#12): the first answer to a request sent with an `Idempotency-Key`, kept per
// installation for 24 hours so a retry replays it instead of creating a second dataset or job.
// The primary key is the claim: of two requests with one key, exactly one inserts the row.
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createTable('idempotency_keys')
      .addColumn('installation_id', 'integer', (c) =>
        c.notNull().references('installations.id').onDelete('cascade'),
      )
      .addColumn('key', 'text', notNull)
      .addColumn('fingerprint', 'text', notNull)
      .addColumn('holder', 'text', notNull)
      .addColumn('created_at', 'bigint', notNull)
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('response_status', 'integer')
      .addColumn('response_type', 'text')
      .addColumn('response_body', 'text')
      .addPrimaryKeyConstraint('idempotency_keys_pk', ['installation_id', 'key'])
      .execute();
    // The sweep deletes the oldest rows first, a bounded batch at a time.
    await db.schema
      .createIndex('idempotency_keys_created')
      .on('idempotency_keys')
      .column('created_at')
      .execute();
  },
};
