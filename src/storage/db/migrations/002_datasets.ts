// Datasets, their schemas and their tags (one tag per app allowed to see a dataset).
import type { Migration } from './helpers.js';
import { notNull, withIdColumn } from './helpers.js';

export const migration: Migration = {
  async up(db, engine) {
    await db.schema
      .createTable('datasets')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('workspace_id', 'integer', (c) =>
        c.notNull().references('workspaces.id').onDelete('cascade'),
      )
      .addColumn('name', 'text', notNull)
      .addColumn('description', 'text', notNull)
      .addColumn('created_by_user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('created_by_app_id', 'text', notNull)
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addColumn('record_count', 'bigint', (c) => c.notNull().defaultTo(0))
      .addColumn('date_last_record_updated', 'text')
      .addColumn('records_table', 'text')
      .addColumn('generation', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .createIndex('datasets_workspace')
      .on('datasets')
      .columns(['workspace_id', 'created_at'])
      .execute();

    await withIdColumn(db.schema.createTable('dataset_schemas'), engine)
      .addColumn('dataset_id', 'text', (c) =>
        c.notNull().unique().references('datasets.id').onDelete('cascade'),
      )
      .addColumn('properties', 'text', notNull)
      .addColumn('primary_key', 'text', notNull)
      .execute();

    await db.schema
      .createTable('dataset_tags')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
      .addColumn('app_id', 'text', (c) => c.notNull().references('apps.id').onDelete('cascade'))
      .addColumn('created_at', 'text', notNull)
      .addUniqueConstraint('dataset_tags_dataset_app', ['dataset_id', 'app_id'])
      .execute();
    await db.schema.createIndex('dataset_tags_app').on('dataset_tags').column('app_id').execute();
  },
};
