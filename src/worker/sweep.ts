// Housekeeping a worker does between jobs: expire unused upload URLs, drop retired record tables
// once no reader can still be paging them.
import type { Kysely } from 'kysely';
import type { Tables } from '../storage/db/tables.js';
import type { ObjectStore } from '../storage/objects/index.js';
import type { RecordStore } from '../storage/records/index.js';
import { asUploadType } from '../domain/jobs/status.js';
import { expireUpload } from '../domain/jobs/uploads.js';

/** Superseded tables stay this long: a page request or export that started just before a swap finishes. */
export const RETIRED_TABLE_GRACE_MS = 10 * 60 * 1000;

export interface SweepDeps {
  db: Kysely<Tables>;
  objects: ObjectStore;
  records: RecordStore;
}

/** Runs every housekeeping step once; returns how many things it changed. */
export async function sweep(deps: SweepDeps, now = Date.now()): Promise<number> {
  return (await expireUploads(deps, now)) + (await dropRetiredTables(deps, now));
}

/** Created jobs whose upload URL's hour has passed end Expired. */
export async function expireUploads({ db, objects }: SweepDeps, now: number): Promise<number> {
  const due = await db
    .selectFrom('dataset_jobs')
    .select(['id', 'dataset_id', 'object_key', 'upload_type'])
    .where('status', '=', 'Created')
    .where('upload_expires_at', '<', now)
    .where((w) => w.or([w('upload_claim', 'is', null), w('upload_claim_expires_at', '<', now)]))
    .execute();
  let n = 0;
  for (const job of due) {
    // A store that takes uploads itself (presigned PUT) may hold a file that arrived in time but
    // was not noticed yet: the upload watcher queues that job instead.
    if (
      objects.presigned !== null &&
      asUploadType(job.upload_type) === 'singlerequest' &&
      job.object_key !== null &&
      (await objects.head(job.object_key)) !== null
    ) {
      continue;
    }
    if (await expireUpload(db, objects, job)) n++;
  }
  return n;
}

/** Drops the retired record tables whose grace period has passed. */
export async function dropRetiredTables({ db, records }: SweepDeps, now: number): Promise<number> {
  const due = await db
    .selectFrom('dataset_retired_tables')
    .select(['table_name', 'dataset_id'])
    .where('retired_at', '<', now - RETIRED_TABLE_GRACE_MS)
    .execute();
  for (const row of due) {
    await records.dropTable(row.table_name);
    await db.deleteFrom('dataset_retired_tables').where('table_name', '=', row.table_name).execute();
  }
  return due.length;
}
