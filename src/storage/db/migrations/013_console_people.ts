// The web console's people: accounts (operators and workspace members), memberships with a role,
// one-time invitations, server-side sessions, sign-in failure counts and the audit log. Every
// secret (invitation link, session id) is stored as a sha256 hash; passwords as scrypt hashes.
import type { Migration } from './helpers.js';
import { notNull, withIdColumn } from './helpers.js';

export const migration: Migration = {
  async up(db, engine) {
    await withIdColumn(db.schema.createTable('console_accounts'), engine)
      // Lower-cased at the door, so the unique index is case-insensitive in both dialects.
      .addColumn('email', 'text', (c) => c.notNull().unique())
      .addColumn('display_name', 'text', notNull)
      // Null until the invitation is accepted: such an account cannot sign in.
      .addColumn('password_hash', 'text')
      .addColumn('is_operator', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', notNull)
      .execute();
    await db.schema
      .createTable('console_memberships')
      .addColumn('account_id', 'integer', (c) =>
        c.notNull().references('console_accounts.id').onDelete('cascade'),
      )
      .addColumn('workspace_id', 'integer', (c) =>
        c.notNull().references('workspaces.id').onDelete('cascade'),
      )
      .addColumn('role', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addPrimaryKeyConstraint('console_memberships_pk', ['account_id', 'workspace_id'])
      .execute();
    await db.schema
      .createIndex('console_memberships_workspace')
      .on('console_memberships')
      .column('workspace_id')
      .execute();
    await db.schema
      .createTable('console_invitations')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'integer', (c) =>
        c.notNull().references('console_accounts.id').onDelete('cascade'),
      )
      // Null for an operator's invitation; else the workspace and role it grants.
      .addColumn('workspace_id', 'integer', (c) => c.references('workspaces.id').onDelete('cascade'))
      .addColumn('role', 'text')
      /** Epoch milliseconds. */
      .addColumn('expires_at', 'bigint', notNull)
      .addColumn('used_at', 'text')
      .addColumn('created_at', 'text', notNull)
      .execute();
    await db.schema
      .createTable('console_sessions')
      .addColumn('id_hash', 'text', (c) => c.primaryKey())
      .addColumn('account_id', 'integer', (c) =>
        c.notNull().references('console_accounts.id').onDelete('cascade'),
      )
      /** Epoch milliseconds: the absolute expiry counts from here … */
      .addColumn('created_ms', 'bigint', notNull)
      /** … the idle expiry from here. */
      .addColumn('last_seen_ms', 'bigint', notNull)
      .execute();
    await db.schema
      .createIndex('console_sessions_account')
      .on('console_sessions')
      .column('account_id')
      .execute();
    // One row per email+IP with recent failures: shared by every API instance on the database.
    await db.schema
      .createTable('console_sign_in_failures')
      .addColumn('key', 'text', (c) => c.primaryKey())
      .addColumn('failures', 'integer', notNull)
      /** Epoch milliseconds: start of the counting window. */
      .addColumn('window_start_ms', 'bigint', notNull)
      .execute();
    await withIdColumn(db.schema.createTable('console_audit'), engine)
      .addColumn('at', 'text', notNull)
      // The actor by id and by email: the email stays readable after the account is gone.
      .addColumn('account_id', 'integer')
      .addColumn('actor', 'text', notNull)
      .addColumn('action', 'text', notNull)
      .addColumn('workspace_id', 'integer')
      .addColumn('detail', 'text')
      .execute();
    await db.schema
      .createIndex('console_audit_workspace')
      .on('console_audit')
      .columns(['workspace_id', 'id'])
      .execute();
  },
};
