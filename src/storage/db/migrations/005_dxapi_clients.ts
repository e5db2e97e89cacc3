// What existing DXAPI clients need: a workspace's type (shown by /auth/me), and the state of an
// upload URL in columns of its own: single-request or resumable, the bytes a resumable session has
// persisted and its declared total, and the claim of the PUT streaming into it (until now kept in
// the worker's lease columns, which mean something else).
import { sql } from 'kysely';
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema
      .alterTable('workspaces')
      .addColumn('type', 'text', (c) => c.notNull().defaultTo('Organization'))
      .execute();
    // SQLite adds one column per statement.
    for (const [name, type] of [
      ['upload_type', 'text'],
      ['upload_received', 'bigint'],
      ['upload_total', 'bigint'],
      ['upload_claim', 'text'],
      ['upload_claim_expires_at', 'bigint'],
    ] as const) {
      await db.schema.alterTable('dataset_jobs').addColumn(name, type).execute();
    }
    await sql`update dataset_jobs set upload_type = 'singlerequest' where job_type = 'uploadUrl'`.execute(db);
    // Upload claims of jobs awaiting their file lived in the lease columns: they end here.
    await sql`update dataset_jobs set lease_owner = null, lease_expires_at = null where status = 'Created'`.execute(
      db,
    );
  },
};
