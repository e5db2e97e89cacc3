// Reading a records table, the same SQL in both dialects: keyset pages in primary-key order (row
// order without one), equality filters. Integers are read as text so 64-bit values stay exact.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { DatasetSchema, SchemaProperty } from '../../domain/datasets/schema.js';
import type { Tables } from '../db/tables.js';
import { ROW_COLUMN, type RecordStoreCapabilities } from './record-store.js';

/** A value as read: integers as their decimal text, booleans as booleans. */
export type ReadValue = string | number | boolean | null;

/** A record as read, aligned with schema.properties, plus the values of the order columns. */
export interface ReadRow {
  values: ReadValue[];
  /** The keyset position of the row (its order-column values, as the database gives them). */
  position: (string | number | boolean)[];
}

export interface PageQuery {
  table: string;
  schema: DatasetSchema;
  /** Property name → value already typed for the database (see filterValue). */
  filters: [string, string | number | boolean][];
  /** The position of the last row of the previous page. */
  after: (string | number | boolean)[] | null;
  limit: number;
}

/** The columns a table is ordered by: its primary key, else the hidden row order. */
export function orderColumns(schema: DatasetSchema): string[] {
  return schema.primaryKey.length > 0 ? schema.primaryKey : [ROW_COLUMN];
}

function column(p: SchemaProperty): RawBuilder<unknown> {
  return p.type === 'integer' ? sql`cast(${sql.ref(p.name)} as text)` : sql.ref(p.name);
}

/** Reads one page (at most `limit` rows) after `after`. */
export async function readPage(
  db: Kysely<Tables>,
  caps: RecordStoreCapabilities,
  q: PageQuery,
): Promise<ReadRow[]> {
  const order = orderColumns(q.schema);
  const types = new Map(q.schema.properties.map((p) => [p.name, p.type]));
  const orderSelect = order.map((name, i) =>
    types.get(name) === 'integer'
      ? sql`cast(${sql.ref(name)} as text) as ${sql.ref(`k${i}`)}`
      : sql`${sql.ref(name)} as ${sql.ref(`k${i}`)}`,
  );
  const valueSelect = q.schema.properties.map((p, i) => sql`${column(p)} as ${sql.ref(`v${i}`)}`);
  const where: RawBuilder<unknown>[] = q.filters.map(([name, value]) => sql`${sql.ref(name)} = ${value}`);
  if (q.after !== null) {
    const refs = sql.join(order.map((n) => sql.ref(n)));
    where.push(sql`(${refs}) > (${sql.join(q.after.map((v) => sql`${v}`))})`);
  }
  const { rows } = await sql<Record<string, ReadValue>>`
    select ${sql.join([...orderSelect, ...valueSelect])}
      from ${sql.table(q.table)}
     ${where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``}
     order by ${sql.join(order.map((n) => sql.ref(n)))}
     limit ${q.limit}`.execute(db);
  return rows.map((r) => ({
    position: order.map((_, i) => r[`k${i}`] as string | number | boolean),
    values: q.schema.properties.map((p, i) => {
      const v = r[`v${i}`] ?? null;
      return p.type === 'boolean' && caps.booleansAsIntegers && v !== null ? v === 1 || v === '1' : v;
    }),
  }));
}
