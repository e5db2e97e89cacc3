// Signed webhooks for apps (#13): one endpoint per app, and the outbox of its deliveries. A job
// remembers the installation it was created through, so its final move can enqueue the delivery
// for that installation's app in the same transaction.
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    // No foreign key: a job outlives the installation it came through (deliveries then stop).
    await db.schema.alterTable('dataset_jobs').addColumn('installation_id', 'integer').execute();

    await db.schema
      .createTable('app_webhooks')
      .addColumn('app_id', 'text', (c) => c.primaryKey().references('apps.id').onDelete('cascade'))
      .addColumn('url', 'text', notNull)
      // The secret sealed with a key derived from SIGNING_SECRET (lib/secrets.ts, bound to its app): the HMAC needs it.
      .addColumn('secret_sealed', 'text', notNull)
      .addColumn('events', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .execute();

    await db.schema
      .createTable('webhook_deliveries')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('app_webhooks.app_id').onDelete('cascade'))
      .addColumn('installation_id', 'integer', notNull)
      .addColumn('workspace_id', 'integer', notNull)
      .addColumn('job_id', 'text', notNull)
      .addColumn('event', 'text', notNull)
      .addColumn('occurred_at', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('status', 'text', notNull)
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('next_attempt_at', 'bigint', notNull)
      .addColumn('give_up_at', 'bigint', notNull)
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('last_attempt_at', 'text')
      .addColumn('last_status_code', 'integer')
      .addColumn('last_error', 'text')
      .addColumn('delivered_at', 'text')
      .execute();
    // The deliverer's claim: the oldest due pending delivery.
    await db.schema
      .createIndex('webhook_deliveries_due')
      .on('webhook_deliveries')
      .columns(['status', 'next_attempt_at'])
      .execute();
    // The app's list, newest first.
    await db.schema
      .createIndex('webhook_deliveries_app')
      .on('webhook_deliveries')
      .columns(['app_id', 'created_at', 'id'])
      .execute();
  },
};
