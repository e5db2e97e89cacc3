// The change feed (GET /datasets/{id}/changes; docs/loading.md, "Following changes"): each load or
// schema change of a dataset with a primary key writes its changed keys into the dataset's change
// log table (chg_<hex>, made by the record store) under a batch; the batch row becomes visible in
// the commit's transaction, numbered by the generation the commit made. `changes_pruned_through`
// is the last generation whose history is gone: a cursor from before it answers 410. Datasets
// loaded before this migration keep no history of what came before it.
import { sql } from 'kysely';
import type { Migration } from './helpers.js';
import { notNull, withIdColumn } from './helpers.js';

export const migration: Migration = {
  async up(db, engine) {
    await withIdColumn(db.schema.createTable('dataset_change_batches'), engine)
      .addColumn('dataset_id', 'text', (c) => c.notNull().references('datasets.id').onDelete('cascade'))
      // The generation the batch's commit made; null until then (a running load's batch).
      .addColumn('seq', 'integer')
      .addColumn('kind', 'text', notNull)
      // JSON of a schema change: its version, schema and changes; null for records.
      .addColumn('detail', 'text')
      .addColumn('created_at', 'bigint', notNull)
      .addColumn('committed_at', 'bigint')
      .execute();
    await db.schema
      .createIndex('dataset_change_batches_seq')
      .on('dataset_change_batches')
      .columns(['dataset_id', 'seq'])
      .unique()
      .execute();
    // The sweep finds batches past their time, and those of loads that never committed.
    await db.schema
      .createIndex('dataset_change_batches_age')
      .on('dataset_change_batches')
      .columns(['created_at'])
      .execute();
    await sql`alter table datasets add column changes_pruned_through integer not null default 0`.execute(db);
    await sql`update datasets set changes_pruned_through = generation`.execute(db);
  },
};
