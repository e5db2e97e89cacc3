// Live progress of a running load job, kept on its row: the worker's heartbeat writes the figures
// about every second (one guarded UPDATE that also renews the lease), and the job view reads them.
// They are not status entries: a progress tick is not a change of state.
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    // SQLite adds one column per statement.
    for (const [name, type] of [
      ['progress_bytes', 'bigint'],
      ['progress_total_bytes', 'bigint'],
      ['progress_rows', 'bigint'],
      ['progress_at', 'text'],
    ] as const) {
      await db.schema.alterTable('dataset_jobs').addColumn(name, type).execute();
    }
  },
};
