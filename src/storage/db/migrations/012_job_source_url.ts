// A recordsLoad job's URL is a credential: from now on the row keeps it sealed (AES-256-GCM) only
// while the job may run, and a shown form without secrets (origin, path, query keys) for good.
// Rows written before: the shown form is filled in, and the URLs of ended jobs are cleared. The URL
// of a job still queued stays as it was (no key here to seal it with) and is cleared when it ends.
import { sql } from 'kysely';
import { urlWithoutSecrets } from '../../../lib/redact.js';
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema.alterTable('dataset_jobs').addColumn('source_shown', 'text').execute();
    const rows = await sql<{
      id: string;
      source_url: string;
    }>`select id, source_url from dataset_jobs where source_url is not null`.execute(db);
    for (const row of rows.rows) {
      await sql`update dataset_jobs set source_shown = ${urlWithoutSecrets(row.source_url)} where id = ${row.id}`.execute(
        db,
      );
    }
    await sql`update dataset_jobs set source_url = null where status in ('Completed', 'Failed', 'Expired')`.execute(
      db,
    );
  },
};
