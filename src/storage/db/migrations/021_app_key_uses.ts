// When each app key last signed a JWT the service verified: a table of its own, since an update of
// app_keys moves the identity epoch (migration 014) and would drop every process's cached
// credentials at each use.
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createTable('app_key_uses')
      .addColumn('kid', 'text', (c) => c.primaryKey().references('app_keys.kid').onDelete('cascade'))
      .addColumn('last_used_at', 'text', notNull)
      .execute();
  },
};
