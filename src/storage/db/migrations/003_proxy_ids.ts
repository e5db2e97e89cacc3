// Proxy IDs: the X-PROXYVID values handed out at onboarding, stored only as a sha256 hash.
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createTable('proxy_ids')
      // The first characters of the ID: not enough to use it, enough to name it in lists and logs.
      .addColumn('prefix', 'text', (c) => c.primaryKey())
      .addColumn('id_hash', 'text', (c) => c.notNull().unique())
      .addColumn('name', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('revoked_at', 'text')
      .execute();
  },
};
