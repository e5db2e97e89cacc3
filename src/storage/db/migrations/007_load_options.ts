// A load job's options (dry run, tolerated bad records) and every row error its file had. The
// errors are kept per attempt: a worker whose lease lapsed may still be writing those of its own
// attempt, and readers look only at the attempt that ran last.
import type { Migration } from './helpers.js';
import { notNull } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    // 0/1 in both engines: SQLite has no boolean type, and one representation keeps one code path.
    await db.schema
      .alterTable('dataset_jobs')
      .addColumn('dry_run', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();
    await db.schema
      .alterTable('dataset_jobs')
      .addColumn('max_bad_records', 'integer', (c) => c.notNull().defaultTo(0))
      .execute();

    await db.schema
      .createTable('dataset_job_errors')
      .addColumn('job_id', 'text', (c) => c.notNull().references('dataset_jobs.id').onDelete('cascade'))
      .addColumn('attempt', 'integer', notNull)
      .addColumn('line', 'bigint', notNull)
      .addColumn('seq', 'bigint', notNull)
      .addColumn('property', 'text')
      .addColumn('message', 'text', notNull)
      .addColumn('original_text', 'text')
      // The key is the order errors are listed in (line order; found order within a line).
      .addPrimaryKeyConstraint('dataset_job_errors_pk', ['job_id', 'attempt', 'line', 'seq'])
      .execute();
  },
};
