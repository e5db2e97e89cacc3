// GET /datasets/:id/records: keyset pages of a dataset's current records, rendered as JSON text
// (built by hand so 64-bit integers keep every digit); the console reads the same pages as values.
import type { Kysely } from 'kysely';
import type { Tables } from '../../storage/db/tables.js';
import {
  InvalidPosition,
  orderColumns,
  type KeysetPosition,
  type ReadValue,
  type RecordStore,
} from '../../storage/records/record-store.js';
import { problem } from '../../errors.js';
import { findVisibleDatasetWithSchema, type DatasetReader } from '../datasets/datasets.js';
import { tableSchemaOf, type SchemaProperty } from '../datasets/schema.js';
import { decodePageToken, encodePageToken, invalidPageToken, parseFilters, parsePageSize } from './query.js';
import { recordJson } from './render.js';

/** One page of a dataset's current records as read: values aligned with the schema's properties. */
export interface RecordsPage {
  properties: SchemaProperty[];
  rows: ReadValue[][];
  nextPageToken: string | null;
  /** The generation read, and the key: what the feed's cursor of this read is made of. */
  generation: number;
  primaryKey: string[];
}

/** Makes the change-feed cursor of a read of `generation` (null: the dataset keeps no changes). */
export type ReadCursor = (generation: number, primaryKey: string[]) => string | null;

/** Answers a page request with the JSON text of `{metadata: {count, nextPageToken,
 * changesCursor}, data}`: the cursor from which the change feed goes on after this generation. */
export async function recordsPageJson(
  db: Kysely<Tables>,
  records: RecordStore,
  caller: DatasetReader,
  datasetId: string,
  query: Record<string, unknown>,
  cursorOf: ReadCursor,
): Promise<string> {
  const p = await recordsPage(db, records, caller, datasetId, query);
  return page(
    p.rows.map((values) => recordJson(p.properties, values)),
    p.nextPageToken,
    cursorOf(p.generation, p.primaryKey),
  );
}

/** A keyset page of a visible dataset's records (GET .../records, and the console's first page). */
export async function recordsPage(
  db: Kysely<Tables>,
  records: RecordStore,
  caller: DatasetReader,
  datasetId: string,
  query: Record<string, unknown>,
): Promise<RecordsPage> {
  const { row: ds, schema } = await findVisibleDatasetWithSchema(db, caller, datasetId);
  const table = tableSchemaOf(schema);
  const pageSize = parsePageSize(query.pageSize);
  const filters = parseFilters(schema, query);
  let after: KeysetPosition | null = null;
  if (typeof query.pageToken === 'string' && query.pageToken !== '') {
    const token = decodePageToken(query.pageToken, orderColumns(table).length);
    if (token.g !== ds.generation) {
      throw problem(
        'conflict',
        'The records were replaced since this page token was issued; start again without it.',
      );
    }
    after = token.k;
  }
  const read = { generation: ds.generation, primaryKey: table.primaryKey };
  if (ds.records_table === null)
    return { properties: schema.properties, rows: [], nextPageToken: null, ...read };
  const rows = await records
    .readPage(ds.records_table, table, { filters, after, limit: pageSize + 1 })
    .catch((err: unknown) => {
      if (err instanceof InvalidPosition) throw invalidPageToken();
      throw err;
    });
  const more = rows.length > pageSize;
  const shown = more ? rows.slice(0, pageSize) : rows;
  const last = shown.at(-1);
  const next = more && last !== undefined ? encodePageToken({ g: ds.generation, k: last.position }) : null;
  return { properties: schema.properties, rows: shown.map((r) => r.values), nextPageToken: next, ...read };
}

function page(items: string[], next: string | null, changesCursor: string | null): string {
  return `{"metadata":{"count":${items.length},"nextPageToken":${JSON.stringify(next)},"changesCursor":${JSON.stringify(changesCursor)}},"data":[${items.join(',')}]}`;
}
