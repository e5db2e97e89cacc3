// Load jobs with their status history, and the ledger of superseded record tables awaiting their drop.
import type { Migration } from './helpers.js';
import { notNull, withIdColumn } from './helpers.js';

export const migration: Migration = {
  async up(db, engine) {
    await db.schema
      .createTable('dataset_jobs')
      .addColumn('id', 'text', (c) => c.primaryKey())
      .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
      .addColumn('workspace_id', 'integer', notNull)
      .addColumn('job_type', 'text', notNull)
      .addColumn('mode', 'text', notNull)
      .addColumn('content_type', 'text')
      .addColumn('source_url', 'text')
      .addColumn('object_key', 'text')
      .addColumn('status', 'text', notNull)
      .addColumn('lease_owner', 'text')
      .addColumn('lease_expires_at', 'bigint')
      .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
      .addColumn('created_at', 'text', notNull)
      .addColumn('updated_at', 'text', notNull)
      .addColumn('created_by_user_id', 'integer', (c) => c.notNull().references('users.id'))
      .addColumn('upload_expires_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('dataset_jobs_status')
      .on('dataset_jobs')
      .columns(['status', 'created_at'])
      .execute();
    await db.schema
      .createIndex('dataset_jobs_dataset')
      .on('dataset_jobs')
      .columns(['dataset_id', 'created_at'])
      .execute();

    await withIdColumn(db.schema.createTable('dataset_job_logs'), engine)
      .addColumn('job_id', 'text', (c) => c.notNull().references('dataset_jobs.id').onDelete('cascade'))
      .addColumn('status_code', 'integer', notNull)
      .addColumn('status_name', 'text', notNull)
      .addColumn('log_data', 'text')
      .addColumn('error_data', 'text')
      .addColumn('created_at', 'text', notNull)
      .execute();
    await db.schema
      .createIndex('dataset_job_logs_job')
      .on('dataset_job_logs')
      .columns(['job_id', 'id'])
      .execute();

    // No foreign key: a retired table must still be dropped after its dataset is gone.
    await db.schema
      .createTable('dataset_retired_tables')
      .addColumn('table_name', 'text', (c) => c.primaryKey())
      .addColumn('dataset_id', 'text', notNull)
      .addColumn('retired_at', 'bigint', notNull)
      .execute();
  },
};
