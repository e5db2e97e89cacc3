// Users, apps and their keys, workspaces, installations and access tokens.
import type { Migration } from './helpers.js';
import { notNull, withIdColumn } from './helpers.js';

export const migration: Migration = {
  async up(db, engine) {
    await withIdColumn(db.schema.createTable('users'), engine)
      .addColumn('display_name', 'text', notNull)
      .addColumn('email', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .execute();

    await withIdColumn(db.schema.createTable('workspaces'), engine)
      .addColumn('display_name', 'text', notNull)
      .addColumn('owner_user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('key_hash', 'text', notNull)
      .addColumn('key_version', 'integer', (c) => c.notNull().defaultTo(1))
      .addColumn('created_at', 'text', notNull)
      .execute();

    await db.schema
      .createTable('apps')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('name', 'text', notNull)
      .addColumn('owner_workspace_id', 'integer', (c) => c.references('workspaces.id'))
      .addColumn('created_at', 'text', notNull)
      .execute();

    await db.schema
      .createTable('app_keys')
      .addColumn('kid', 'text', (c) => c.primaryKey())
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
      .addColumn('alg', 'text', notNull)
      .addColumn('public_key_pem', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('revoked_at', 'text')
      .execute();
    await db.schema.createIndex('app_keys_app').on('app_keys').column('app_id').execute();

    await withIdColumn(db.schema.createTable('installations'), engine)
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
      .addColumn('workspace_id', 'integer', (c) =>
        c.notNull().references('workspaces.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', notNull)
      .addColumn('created_by_user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('created_at', 'text', notNull)
      .addUniqueConstraint('installations_app_workspace', ['app_id', 'workspace_id'])
      .execute();
    await db.schema
      .createIndex('installations_workspace')
      .on('installations')
      .column('workspace_id')
      .execute();

    await db.schema
      .createTable('access_tokens')
      .addColumn('token_hash', 'text', (c) => c.primaryKey())
      .addColumn('installation_id', 'integer', (c) =>
        c.notNull().references('installations.id').onDelete('cascade'),
      )
      .addColumn('key_version', 'integer', notNull)
      .addColumn('permissions', 'text', notNull)
      .addColumn('expires_at', 'bigint', notNull)
      .addColumn('created_at', 'text', notNull)
      .execute();
    await db.schema.createIndex('access_tokens_expiry').on('access_tokens').column('expires_at').execute();
  },
};
