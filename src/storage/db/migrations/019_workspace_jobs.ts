// The console's list of every load of a workspace, newest first (listWorkspaceJobs): an index that
// serves it by keyset whatever the number of the service's jobs.
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .createIndex('dataset_jobs_workspace')
      .on('dataset_jobs')
      .columns(['workspace_id', 'created_at', 'id'])
      .execute();
  },
};
