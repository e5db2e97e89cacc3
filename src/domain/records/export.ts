// records:retrieve: every record of the dataset as it is at the call, as CSV or newline-delimited
// JSON. The call only records a link that pins the generation's records table (answered at once,
// whatever the size); the records are streamed from that table when the link is fetched, nothing is
// written first. The sweep keeps a pinned table until the link has expired (worker/sweep.ts).
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DatasetRow, ExportFormat, Tables } from '../../storage/db/tables.js';
import type { RecordStore } from '../../storage/records/record-store.js';
import { datasetSchemaOf, datasetWithSchema } from '../datasets/datasets.js';
import { tableSchemaOf, type DatasetSchema } from '../datasets/schema.js';
import { csvHeader } from './render.js';

export type { ExportFormat };

/** Validity of a download link. */
export const EXPORT_LINK_TTL_SECONDS = 3600;

/** A download link as recorded. */
export interface ExportLink {
  id: number;
  /** Epoch seconds. */
  expiresAt: number;
  /** The generation whose records the link gives (the change feed's cursor of this read). */
  generation: number;
  primaryKey: string[];
}

/** Records a link to the dataset's records as they are now; the caller signs its URL. */
export async function createExportLink(
  db: Kysely<Tables>,
  ds: DatasetRow,
  format: ExportFormat,
  nowSeconds: number,
): Promise<ExportLink> {
  const expiresAt = nowSeconds + EXPORT_LINK_TTL_SECONDS;
  // The generation, its table and the schema's properties in one read, since a schema change
  // swaps them together: the link pins a table with the columns of the properties it keeps.
  const now = await datasetWithSchema(db, ds.id);
  const pinned = now?.row ?? ds;
  const { id } = await db
    .insertInto('dataset_export_links')
    .values({
      dataset_id: ds.id,
      generation: pinned.generation,
      table_name: pinned.records_table,
      format,
      expires_at: expiresAt * 1000,
      ...(now !== undefined ? { properties: JSON.stringify(now.schema.properties) } : {}),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  return {
    id,
    expiresAt,
    generation: pinned.generation,
    primaryKey: now?.schema.primaryKey ?? [],
  };
}

/** The media type of an export format. */
export function mediaTypeOf(format: ExportFormat): string {
  return format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
}

/**
 * The text of a link's records (CSV with its header line, or NDJSON), streamed from the table it
 * pins; null when there is no such link of this dataset and format (never made, or the dataset
 * was deleted). The signature and expiry of the URL are the caller's to check first.
 */
export async function openExport(
  db: Kysely<Tables>,
  records: RecordStore,
  datasetId: string,
  linkId: number,
  format: ExportFormat,
): Promise<Readable | null> {
  const link = await db
    .selectFrom('dataset_export_links')
    .select(['table_name', 'properties'])
    .where('id', '=', linkId)
    .where('dataset_id', '=', datasetId)
    .where('format', '=', format)
    .executeTakeFirst();
  if (link === undefined) return null;
  const current = await datasetSchemaOf(db, datasetId);
  // The schema the link was made under (its table's columns), whatever changed since.
  const schema =
    link.properties === null
      ? current
      : { ...current, properties: JSON.parse(link.properties) as DatasetSchema['properties'] };
  const header = format === 'csv' ? csvHeader(schema.properties) : '';
  if (link.table_name === null) return Readable.from([Buffer.from(header)], { objectMode: false });
  const rows = records.streamText(link.table_name, tableSchemaOf(schema), format);
  return header === '' ? rows : Readable.from(withHead(Buffer.from(header), rows), { objectMode: false });
}

async function* withHead(head: Buffer, rest: Readable): AsyncGenerator<Buffer> {
  yield head;
  yield* rest as AsyncIterable<Buffer>;
}
