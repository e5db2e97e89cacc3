// What each value kind is in each engine: its SQL column type, how its values are bound and how
// they are read back. The one place where a kind meets an engine: a new kind fails to compile
// until it has its entry here.
import {
  INT64_MAX,
  INT64_MIN,
  quoteId,
  type CellValue,
  type CopiedColumn,
  type ReadValue,
  type TableSchema,
  type ValueKind,
} from './record-store.js';

export type RecordEngine = 'sqlite' | 'postgres';

/** A kind as one engine keeps it. */
interface KindInEngine {
  sqlType: string;
  /** Selected as text (cast in SQL) rather than as the driver would convert it. */
  readAsText: boolean;
  /** Turns a non-null value from the driver into a ReadValue; null when it already is one. */
  decode: ((v: unknown) => ReadValue) | null;
  /** Whether `v` is a keyset position of such a column as this engine reads it (page tokens come
   * back from callers, so a position of the wrong type must be refused before it is bound). */
  isPosition: (v: unknown) => boolean;
}

const INT64_TEXT = /^-?\d{1,19}$/;
/** Decimal text of a 64-bit integer, as int64 columns are read. */
export const isInt64Text = (v: unknown): boolean =>
  typeof v === 'string' && INT64_TEXT.test(v) && BigInt(v) >= INT64_MIN && BigInt(v) <= INT64_MAX;
const isFiniteNumber = (v: unknown): boolean => typeof v === 'number' && Number.isFinite(v);
// PostgreSQL text cannot hold NUL: such a value is in no table, and binding it is an error.
const isText = (v: unknown): boolean => typeof v === 'string' && !v.includes('\0');

const plain = (sqlType: string, isPosition: (v: unknown) => boolean): KindInEngine => ({
  sqlType,
  readAsText: false,
  decode: null,
  isPosition,
});
const asText = (sqlType: string): KindInEngine => ({
  sqlType,
  readAsText: true,
  decode: null,
  isPosition: isInt64Text,
});

export const KINDS: Record<ValueKind, Record<RecordEngine, KindInEngine>> = {
  text: { sqlite: plain('text', isText), postgres: plain('text', isText) },
  // As doubles (better-sqlite3's numbers, the pool's int8 parser) values beyond 2^53 lose digits.
  int64: { sqlite: asText('integer'), postgres: asText('bigint') },
  float64: { sqlite: plain('real', isFiniteNumber), postgres: plain('double precision', isFiniteNumber) },
  // SQLite has no boolean type: 0/1 in an integer column, bound so by BIND.sqlite.
  boolean: {
    sqlite: {
      sqlType: 'integer',
      readAsText: false,
      decode: (v) => v === 1 || v === '1',
      isPosition: (v) => v === 0 || v === 1,
    },
    postgres: plain('boolean', (v) => typeof v === 'boolean'),
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

/**
 * The select list that copies a table into one of `schema` (StagingOptions.copyColumns): each
 * column from its source, cast to its kind's type; values as parameters, named by `placeholder`
 * (SQLite's `?`, PostgreSQL's `$n`), in the order of `params`.
 */
export function copiedSelect(
  schema: TableSchema,
  sources: CopiedColumn[],
  engine: RecordEngine,
  placeholder: (n: number) => string,
): { select: string; params: unknown[] } {
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return placeholder(params.length);
  };
  const select = schema.columns.map((c, i) => {
    const source = sources[i];
    if (source === undefined) throw new Error(`no source for column ${c.name}`);
    const type = KINDS[c.kind][engine].sqlType;
    switch (source.from) {
      case 'column':
        return `cast(${quoteId(source.column)} as ${type})`;
      case 'columnWithSuffix':
        return `(${quoteId(source.column)} || cast(${param(source.suffix)} as text))`;
      case 'value':
        return `cast(${param(BIND[engine](source.value))} as ${type})`;
    }
  });
  return { select: select.join(', '), params };
}
