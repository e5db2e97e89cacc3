// records:retrieve: every record of the dataset as it is at the call, as CSV or newline-delimited
// JSON. The file is written once per generation into the object store and reused by later calls.
import { Readable } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DatasetRow, Tables } from '../../storage/db/tables.js';
import { objectKeys, type ObjectStore } from '../../storage/objects/index.js';
import type { ReadValue, RecordStore } from '../../storage/records/record-store.js';
import { datasetSchemaOf } from '../datasets/datasets.js';
import { tableSchemaOf, type DatasetSchema } from '../datasets/schema.js';
import { csvHeader, recordCsv, recordJson } from './render.js';

export type ExportFormat = 'csv' | 'ndjson';
const ROWS_PER_PIECE = 500;

/** Exports being written by this process, so concurrent calls share one. */
const inFlight = new Map<string, Promise<void>>();

/** Makes sure the export of the dataset's current generation exists; returns its object key. */
export async function ensureExport(
  db: Kysely<Tables>,
  records: RecordStore,
  objects: ObjectStore,
  ds: DatasetRow,
  format: ExportFormat,
): Promise<string> {
  const key = objectKeys.export(ds.id, ds.generation, format);
  if ((await objects.head(key)) !== null) return key;
  let writing = inFlight.get(key);
  if (writing === undefined) {
    writing = (async () => {
      const schema = await datasetSchemaOf(db, ds.id);
      const body = Readable.from(exportLines(records, ds.records_table, schema, format));
      // Unbounded: the export's size is that of the dataset, which a load already bounded.
      await objects.put(key, body, { contentType: mediaTypeOf(format), maxBytes: Number.MAX_SAFE_INTEGER });
    })().finally(() => inFlight.delete(key));
    inFlight.set(key, writing);
  }
  await writing;
  return key;
}

/** The media type of an export format. */
export function mediaTypeOf(format: ExportFormat): string {
  return format === 'csv' ? 'text/csv; charset=utf-8' : 'application/x-ndjson; charset=utf-8';
}

async function* exportLines(
  records: RecordStore,
  table: string | null,
  schema: DatasetSchema,
  format: ExportFormat,
): AsyncGenerator<string> {
  if (format === 'csv') yield csvHeader(schema.properties);
  if (table === null) return;
  for await (const rows of records.readAll(table, tableSchemaOf(schema))) {
    // Pieces well under V8's 128 KB large-object threshold: those strings die young and cheaply.
    for (let from = 0; from < rows.length; from += ROWS_PER_PIECE) {
      let piece = '';
      for (let i = from; i < Math.min(rows.length, from + ROWS_PER_PIECE); i++) {
        const values = rows[i] as ReadValue[];
        piece += format === 'csv' ? recordCsv(values) : `${recordJson(schema.properties, values)}\n`;
      }
      yield piece;
    }
  }
}
