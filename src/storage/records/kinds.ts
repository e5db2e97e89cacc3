// What each value kind is in each engine: its SQL column type, how its values are bound and how
// they are read back. The one place where a kind meets an engine: a new kind fails to compile
// until it has its entry here.
import { quoteId, type CellValue, type ReadValue, type TableSchema, type ValueKind } from './record-store.js';

export type RecordEngine = 'sqlite' | 'postgres';

/** A kind as one engine keeps it. */
interface KindInEngine {
  sqlType: string;
  /** Selected as text (cast in SQL) rather than as the driver would convert it. */
  readAsText: boolean;
  /** Turns a non-null value from the driver into a ReadValue; null when it already is one. */
  decode: ((v: unknown) => ReadValue) | null;
}

const plain = (sqlType: string): KindInEngine => ({ sqlType, readAsText: false, decode: null });
const asText = (sqlType: string): KindInEngine => ({ sqlType, readAsText: true, decode: null });

export const KINDS: Record<ValueKind, Record<RecordEngine, KindInEngine>> = {
  text: { sqlite: plain('text'), postgres: plain('text') },
  // As doubles (better-sqlite3's numbers, the pool's int8 parser) values beyond 2^53 lose digits.
  int64: { sqlite: asText('integer'), postgres: asText('bigint') },
  float64: { sqlite: plain('real'), postgres: plain('double precision') },
  // SQLite has no boolean type: 0/1 in an integer column, bound so by BIND.sqlite.
  boolean: {
    sqlite: { sqlType: 'integer', readAsText: false, decode: (v) => v === 1 || v === '1' },
    postgres: plain('boolean'),
  },
};

/** A value as bound to a statement of the engine: a cell written, a filter compared. */
export const BIND: Record<RecordEngine, (v: CellValue) => unknown> = {
  sqlite: (v) => (typeof v === 'boolean' ? (v ? 1 : 0) : v),
  // pg sends every parameter as text (a bigint by its toString) and the column's type reads it.
  postgres: (v) => v,
};

/** The column definitions of a table's schema, after the hidden row-order column. */
export function columnDefinitions(schema: TableSchema, engine: RecordEngine): string {
  return schema.columns.map((c) => `${quoteId(c.name)} ${KINDS[c.kind][engine].sqlType}`).join(', ');
}
