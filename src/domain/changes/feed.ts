// GET /datasets/:id/changes: what changed since a cursor, in commit order (batch by batch, each
// batch's keys in key order), each key once, at its latest change: the whole current record of a
// key inserted or updated, the key alone of one deleted, and a schema change as an event of its own
// before the keys it rewrote. Every page is read against one generation: its batches and its
// records table, read together with the dataset's row (docs/loading.md, "Following changes").
import type { Kysely } from 'kysely';
import type { ChangeBatchKind, Tables } from '../../storage/db/tables.js';
import {
  changesTableName,
  type ChangeRead,
  type ChangeRow,
  type RecordStore,
} from '../../storage/records/index.js';
import { problem } from '../../errors.js';
import type { SchemaChangeDetail } from '../datasets/change-schema.js';
import { findVisibleDatasetWithSchema, type DatasetReader } from '../datasets/datasets.js';
import { tableSchemaOf } from '../datasets/schema.js';
import { parsePageSize } from '../records/query.js';
import {
  afterGeneration,
  decodeCursor,
  encodeCursor,
  invalidCursor,
  type ChangePosition,
  type CursorOwner,
} from './cursor.js';

/** What an entry of the feed says happened to the dataset. */
export const CHANGE_OPS = ['upsert', 'delete', 'schemaChanged'] as const;
export type ChangeOp = (typeof CHANGE_OPS)[number];

/** A reader of the feed: who sees the dataset, and the installation its cursors are bound to. */
export interface ChangesReader extends DatasetReader {
  installationId: number;
}

/** Answers a feed request with the JSON text of `{metadata: {count, nextCursor, hasMore}, data}`. */
export async function changesPageJson(
  db: Kysely<Tables>,
  records: RecordStore,
  secret: string,
  caller: ChangesReader,
  datasetId: string,
  query: { since?: unknown; pageSize?: unknown },
): Promise<string> {
  const { row: ds, schema } = await findVisibleDatasetWithSchema(db, caller, datasetId);
  const table = tableSchemaOf(schema);
  if (table.primaryKey.length === 0) {
    throw problem(
      'conflict',
      'The dataset has no primary key, so its changes cannot be told apart by key: read its records instead.',
      { code: 'dataset_has_no_primary_key' },
    );
  }
  const pageSize = parsePageSize(query.pageSize);
  if (typeof query.since !== 'string' || query.since === '') {
    throw invalidCursor(
      'since is required: the changesCursor of a records read (GET .../records, records:retrieve) or the nextCursor of the feed.',
    );
  }
  const owner: CursorOwner = { datasetId: ds.id, installationId: caller.installationId };
  const from = decodeCursor(secret, owner, query.since);
  const generation = ds.generation;
  if (from.seq > generation + 1) throw invalidCursor('The cursor is not valid.');
  if (from.seq <= ds.changes_pruned_through) throw expired();
  const batches = await db
    .selectFrom('dataset_change_batches')
    .select(['id', 'seq', 'kind', 'detail'])
    .where('dataset_id', '=', ds.id)
    .where('seq', '>=', from.seq)
    .where('seq', '<=', generation)
    .orderBy('seq')
    .execute();
  // Every generation since the cursor must have its batch: one pruned meanwhile is history lost.
  if (batches.length !== generation - from.seq + 1) throw expired();

  const render = (row: ChangeRow) =>
    entryJson(row.record === null ? { op: 'delete', key: row.key } : { op: 'upsert', record: row.record });
  const entries: string[] = [];
  let next: ChangePosition | null = null;
  for (const [i, batch] of batches.entries()) {
    const seq = batch.seq ?? 0;
    let after = seq === from.seq ? from.after : null;
    if (after === null) {
      if (entries.length >= pageSize) {
        next = { seq, after: null };
        break;
      }
      const event = eventOf(batch.kind, batch.detail);
      if (event !== null) entries.push(event);
      after = [];
    }
    const room = pageSize - entries.length;
    if (room === 0) {
      next = { seq, after };
      break;
    }
    const rows = await records.readChanges({
      changesTable: changesTableName(ds.id),
      batch: batch.id,
      keysIn: keysOf(batch.kind),
      later: batches.slice(i + 1).map((b) => b.id),
      current: ds.records_table,
      schema: table,
      after: after.length > 0 ? after : null,
      limit: room + 1,
    });
    const shown = rows.slice(0, room);
    for (const row of shown) entries.push(render(row));
    if (rows.length > room) {
      next = { seq, after: shown.at(-1)?.position ?? after };
      break;
    }
  }
  // The sweep may have pruned the oldest of these batches while they were read (it forgets the
  // generation first, then deletes the keys): a page that may miss keys is refused, not sent.
  const pruned = await db
    .selectFrom('datasets')
    .select('changes_pruned_through')
    .where('id', '=', ds.id)
    .executeTakeFirst();
  if (pruned !== undefined && from.seq <= pruned.changes_pruned_through) throw expired();
  const nextCursor = encodeCursor(secret, owner, next ?? afterGeneration(generation));
  return `{"metadata":{"count":${entries.length},"nextCursor":${JSON.stringify(nextCursor)},"hasMore":${next !== null}},"data":[${entries.join(',')}]}`;
}

/** The changesCursor of a read of `generation`'s records, for the caller; null without a key. */
export function cursorOfRead(
  secret: string,
  owner: CursorOwner,
  generation: number,
  primaryKey: string[],
): string | null {
  return primaryKey.length === 0 ? null : encodeCursor(secret, owner, afterGeneration(generation));
}

/** An entry of the feed; its JSON is written by hand (records keep 64-bit integers exact). */
type Entry =
  | { op: 'upsert'; record: string }
  | { op: 'delete'; key: string }
  | { op: 'schemaChanged'; detail: SchemaChangeDetail };

function entryJson(entry: Entry): string {
  switch (entry.op) {
    case 'upsert':
      return `{"op":"upsert","record":${entry.record}}`;
    case 'delete':
      return `{"op":"delete","key":${entry.key}}`;
    case 'schemaChanged':
      return JSON.stringify({ op: 'schemaChanged', ...entry.detail });
  }
}

/** The event a batch opens with, if any. */
function eventOf(kind: ChangeBatchKind, detail: string | null): string | null {
  switch (kind) {
    case 'records':
    case 'firstLoad':
      return null;
    case 'schemaChanged':
      return entryJson({ op: 'schemaChanged', detail: JSON.parse(detail ?? '{}') as SchemaChangeDetail });
  }
}

/** Where a batch's keys are: written in the log, or every key of the records (capture.ts). */
function keysOf(kind: ChangeBatchKind): ChangeRead['keysIn'] {
  switch (kind) {
    case 'records':
    case 'schemaChanged':
      return 'log';
    case 'firstLoad':
      return 'records';
  }
}

function expired(): Error {
  return problem(
    'gone',
    'The changes since this cursor are no longer kept. Read every record again (GET .../records or records:retrieve), then follow the changes from the changesCursor that read gives.',
    { code: 'changes_cursor_expired' },
  );
}
