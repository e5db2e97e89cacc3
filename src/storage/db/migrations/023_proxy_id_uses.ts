// When each proxy ID was last used by a request the proxy admitted: a table of its own, as
// app_key_uses (021) is, so the proxy's writes never touch proxy_ids, which the proxies reload
// and the console lists. Numbered 023: 022 is another change's.
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createTable('proxy_id_uses')
      .addColumn('prefix', 'text', (c) => c.primaryKey().references('proxy_ids.prefix').onDelete('cascade'))
      .addColumn('last_used_at', 'text', notNull)
      .execute();
  },
};
