// mode=append: a file record whose primary key the dataset already holds is a row error (named
// by its line and the key) and is not loaded. Each parsed batch is looked up in the committed
// table the job's staging table was copied from, in one query through its key index. The parser
// keeps no text of valid records, so the rejected-rows file gets the record as it was read: its
// values, typed, as a CSV line in the schema's order (what a corrected file would hold).
import type { CellValue, RecordStore, TableSchema } from '../../../storage/records/index.js';
import type { ErrorCollector, ParsedBatch } from '../../loading/index.js';
import { csvField } from '../../records/render.js';
import { heldKeyMessage } from '../load-modes.js';

/** The batch's rows whose key `table` does not hold; the others are reported to `errors`. */
export async function refuseHeldKeys(
  records: RecordStore,
  table: string,
  schema: TableSchema,
  batch: ParsedBatch,
  errors: ErrorCollector,
): Promise<ParsedBatch['rows']> {
  const held = await records.keysHeld(table, schema, batch.rows);
  if (held.length === 0) return batch.rows;
  const keyAt = schema.primaryKey.map((name) => schema.columns.findIndex((c) => c.name === name));
  const property = schema.primaryKey.join(',');
  const refused = new Set(held);
  for (const i of held) {
    const row = batch.rows[i] ?? [];
    const key = Object.fromEntries(schema.primaryKey.map((name, k) => [name, row[keyAt[k] ?? -1]]));
    errors.add({ line: batch.lines[i] ?? 0, property, message: heldKeyMessage(key) }, recordText(row));
  }
  return batch.rows.filter((_, i) => !refused.has(i));
}

/** A typed record as one CSV line (no line break), values in the schema's order. */
function recordText(row: readonly CellValue[]): string {
  return row.map((v) => (v === null ? '' : typeof v === 'string' ? csvField(v) : String(v))).join(',');
}
