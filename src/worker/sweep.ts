// Housekeeping a worker does between jobs: expire unused upload URLs, drop retired record tables
// once no reader can still be paging them and no download link pins them, forget expired links,
// remove what puts cut off by a crash left in the store, delete idempotency keys past their 24 hours,
// forget changes older than the feed keeps them.
import type { Kysely } from 'kysely';
import type { Tables } from '../storage/db/tables.js';
import type { ObjectStore } from '../storage/objects/index.js';
import type { RecordStore } from '../storage/records/index.js';
import { expireUploads } from '../domain/jobs/uploads.js';
import { deleteExpiredIdempotencyKeys } from '../domain/idempotency/idempotency-keys.js';
import { pruneChangeHistory } from '../domain/changes/batches.js';

/**
 * Superseded tables stay this long: a page request that started just before a swap finishes. A
 * table a download link pins stays until this long after the link expired, so a download started
 * just before the expiry finishes too (and one still running then reads its snapshot to the end).
 */
export const RETIRED_TABLE_GRACE_MS = 10 * 60 * 1000;

export interface SweepDeps {
  db: Kysely<Tables>;
  objects: ObjectStore;
  records: RecordStore;
  /** How long the change feed keeps changes (CHANGES_RETENTION_HOURS; default 7 days). */
  changesRetentionMs?: number;
}

/** CHANGES_RETENTION_HOURS' default: 7 days. */
export const DEFAULT_CHANGES_RETENTION_MS = 7 * 24 * 3_600_000;

/** A put that wrote nothing for this long has lost its writer: node ends a request that sends
 * nothing for 5 minutes (http.Server requestTimeout), and a crash ends it at once. */
export const ABANDONED_PUT_MS = 10 * 60 * 1000;

/** Runs every housekeeping step once; returns how many things it changed. */
export async function sweep(deps: SweepDeps, now = Date.now()): Promise<number> {
  return (
    (await expireUploads(deps, now)) +
    (await dropRetiredTables(deps, now)) +
    (await forgetExpiredLinks(deps, now)) +
    (await deps.objects.removeAbandonedPuts(now - ABANDONED_PUT_MS)) +
    (await deleteExpiredIdempotencyKeys(deps.db, now)) +
    (await pruneChangeHistory(
      deps.db,
      deps.records,
      deps.changesRetentionMs ?? DEFAULT_CHANGES_RETENTION_MS,
      now,
    ))
  );
}

/** Drops the retired record tables whose grace period has passed and that no live link pins. */
export async function dropRetiredTables({ db, records }: SweepDeps, now: number): Promise<number> {
  const due = await db
    .selectFrom('dataset_retired_tables as r')
    .select(['r.table_name', 'r.dataset_id'])
    .where('r.retired_at', '<', now - RETIRED_TABLE_GRACE_MS)
    .where((eb) =>
      eb.not(
        eb.exists(
          eb
            .selectFrom('dataset_export_links as l')
            .select('l.id')
            .whereRef('l.table_name', '=', 'r.table_name')
            .where('l.expires_at', '>=', now - RETIRED_TABLE_GRACE_MS),
        ),
      ),
    )
    .execute();
  for (const row of due) {
    await records.dropTable(row.table_name);
    await db.deleteFrom('dataset_retired_tables').where('table_name', '=', row.table_name).execute();
  }
  return due.length;
}

/** Deletes the links that can no longer pin anything (expired longer ago than the grace period). */
export async function forgetExpiredLinks({ db }: SweepDeps, now: number): Promise<number> {
  const res = await db
    .deleteFrom('dataset_export_links')
    .where('expires_at', '<', now - RETIRED_TABLE_GRACE_MS)
    .executeTakeFirst();
  return Number(res.numDeletedRows);
}
