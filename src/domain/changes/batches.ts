// Change batches (docs/loading.md, "Following changes"): a load or schema change of a dataset with
// a primary key opens a batch before it writes its changed keys into the dataset's change log; the
// commit's transaction publishes it, numbering it with the generation it made (the swap's
// conditional UPDATE decides that number, so batches are in real commit order on every engine).
// A batch never published (a failed, dry-run or crashed load) is invisible and is discarded.
import type { Kysely } from 'kysely';
import type { ChangeBatchKind, Tables } from '../../storage/db/tables.js';
import { changesTableName, type RecordStore } from '../../storage/records/index.js';
import { BUILD_ALLOWANCE_MS } from '../datasets/generations.js';
import type { Db } from '../identity/users.js';

/** Opens an unpublished batch of the dataset's change log; returns its id. */
export async function openBatch(
  db: Db,
  datasetId: string,
  kind: ChangeBatchKind,
  detail: object | null = null,
  now = Date.now(),
): Promise<number> {
  const { id } = await db
    .insertInto('dataset_change_batches')
    .values({
      dataset_id: datasetId,
      kind,
      detail: detail === null ? null : JSON.stringify(detail),
      created_at: now,
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return id;
}

/** Publishes a batch as the change of `generation`, inside the transaction of its swap. */
export async function publishBatch(
  trx: Db,
  batch: number,
  generation: number,
  now = Date.now(),
): Promise<void> {
  await trx
    .updateTable('dataset_change_batches')
    .set({ seq: generation, committed_at: now })
    .where('id', '=', batch)
    .execute();
}

/** Removes a batch that will not be published, and its keys. */
export async function discardBatch(
  db: Kysely<Tables>,
  records: RecordStore,
  datasetId: string,
  batch: number,
): Promise<void> {
  await records.discardChanges(changesTableName(datasetId), [batch]);
  await db.deleteFrom('dataset_change_batches').where('id', '=', batch).where('seq', 'is', null).execute();
  // A dataset deleted while its load captured: the log that capture may have made again goes too.
  const dataset = await db.selectFrom('datasets').select('id').where('id', '=', datasetId).executeTakeFirst();
  if (dataset === undefined) await records.dropTable(changesTableName(datasetId));
}

/**
 * The sweep's part: batches published longer ago than `retentionMs` go with their keys, and the
 * dataset remembers the last generation it forgot (older cursors then answer 410); batches never
 * published go a day after they were opened (their load crashed: a running one is younger).
 */
export async function pruneChangeHistory(
  db: Kysely<Tables>,
  records: RecordStore,
  retentionMs: number,
  now = Date.now(),
): Promise<number> {
  const due = await db
    .selectFrom('dataset_change_batches')
    .select(['id', 'dataset_id', 'seq'])
    .where((eb) =>
      eb.or([
        eb.and([eb('seq', 'is not', null), eb('committed_at', '<', now - retentionMs)]),
        eb.and([eb('seq', 'is', null), eb('created_at', '<', now - BUILD_ALLOWANCE_MS)]),
      ]),
    )
    .orderBy('dataset_id')
    .orderBy('seq')
    .execute();
  const byDataset = new Map<string, { ids: number[]; lastSeq: number | null }>();
  for (const b of due) {
    const entry = byDataset.get(b.dataset_id) ?? { ids: [], lastSeq: null };
    entry.ids.push(b.id);
    if (b.seq !== null) entry.lastSeq = Math.max(entry.lastSeq ?? 0, b.seq);
    byDataset.set(b.dataset_id, entry);
  }
  for (const [datasetId, { ids, lastSeq }] of byDataset) {
    // The dataset forgets first: a cursor read meanwhile answers 410 rather than skip a batch.
    if (lastSeq !== null) {
      await db
        .updateTable('datasets')
        .set({ changes_pruned_through: lastSeq })
        .where('id', '=', datasetId)
        .where('changes_pruned_through', '<', lastSeq)
        .execute();
    }
    await records.discardChanges(changesTableName(datasetId), ids);
    await db.deleteFrom('dataset_change_batches').where('id', 'in', ids).execute();
  }
  return due.length;
}
