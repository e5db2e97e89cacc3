// Download links of records:retrieve: each pins the records table of the generation it was made
// for, so the sweep keeps that table while the link can still be used.
import type { Migration } from './helpers.js';
import { notNull, withIdColumn } from './helpers.js';

export const migration: Migration = {
  async up(db, engine) {
    await withIdColumn(db.schema.createTable('dataset_export_links'), engine)
      .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
      .addColumn('generation', 'integer', notNull)
      // Null for a dataset never loaded: its export is the CSV header alone (or nothing).
      .addColumn('table_name', 'text')
      .addColumn('format', 'text', notNull)
      .addColumn('expires_at', 'bigint', notNull)
      .execute();
    // The sweep asks, per retired table, whether a link still pins it.
    await db.schema
      .createIndex('dataset_export_links_table')
      .on('dataset_export_links')
      .columns(['table_name', 'expires_at'])
      .execute();
    await db.schema
      .createIndex('dataset_export_links_expiry')
      .on('dataset_export_links')
      .column('expires_at')
      .execute();
  },
};
