// GET /datasets/:id/records: keyset pages of a dataset's current records, rendered as JSON text
// (built by hand so 64-bit integers keep every digit).
import type { Kysely } from 'kysely';
import type { Tables } from '../../storage/db/tables.js';
import {
  InvalidPosition,
  orderColumns,
  type KeysetPosition,
  type RecordStore,
} from '../../storage/records/record-store.js';
import { problem } from '../../errors.js';
import { datasetSchemaOf, findVisibleDataset, type DatasetCaller } from '../datasets/datasets.js';
import { tableSchemaOf } from '../datasets/schema.js';
import { decodePageToken, encodePageToken, invalidPageToken, parseFilters, parsePageSize } from './query.js';
import { recordJson } from './render.js';

/** Answers a page request with the JSON text of `{metadata: {count, nextPageToken}, data}`. */
export async function recordsPageJson(
  db: Kysely<Tables>,
  records: RecordStore,
  caller: DatasetCaller,
  datasetId: string,
  query: Record<string, unknown>,
): Promise<string> {
  const ds = await findVisibleDataset(db, caller, datasetId);
  const schema = await datasetSchemaOf(db, datasetId);
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
  if (ds.records_table === null) return page([], null);
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
  return page(
    shown.map((r) => recordJson(schema.properties, r.values)),
    next,
  );
}

function page(items: string[], next: string | null): string {
  return `{"metadata":{"count":${items.length},"nextPageToken":${JSON.stringify(next)}},"data":[${items.join(',')}]}`;
}
