// The console's way back in and its invitations list: one-time password reset links (stored as
// sha256 hashes, like invitations), per-address counts of links asked for by mail (the rate
// limit, shared by every API instance on the database), and who made each invitation.
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createTable('console_password_resets')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'integer', (c) =>
        c.notNull().references('console_accounts.id').onDelete('cascade'),
      )
      /** Epoch milliseconds. */
      .addColumn('expires_at', 'bigint', notNull)
      .addColumn('used_at', 'text')
      .addColumn('created_at', 'text', notNull)
      .execute();
    await db.schema
      .createIndex('console_password_resets_account')
      .on('console_password_resets')
      .column('account_id')
      .execute();
    // One row per address (hashed) that asked for a link by mail within the window.
    await db.schema
      .createTable('console_reset_requests')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('requests', 'integer', notNull)
      /** Epoch milliseconds: start of the counting window. */
      .addColumn('window_start_ms', 'bigint', notNull)
      .execute();
    // The actor's name as the audit log writes it (an email, or `cli`); null for older rows.
    await db.schema.alterTable('console_invitations').addColumn('invited_by', 'text').execute();
  },
};
