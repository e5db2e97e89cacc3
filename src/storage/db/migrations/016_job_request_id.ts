// The id of the API request that created a job (its X-Request-Id), so that every lifecycle line of
// the job, whichever process writes it, can be joined with that request's access line. Jobs
// created before have none.
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema.alterTable('dataset_jobs').addColumn('request_id', 'text').execute();
  },
};
