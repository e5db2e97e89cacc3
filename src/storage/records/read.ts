// Reading a records table, the same SQL in both engines: keyset pages in primary-key order (row
// order without one) with equality filters, each column selected and decoded as kinds.ts says.
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type { Tables } from '../db/tables.js';
import { BIND, isInt64Text, KINDS, type RecordEngine } from './kinds.js';
import {
  InvalidPosition,
  orderColumns,
  type CellValue,
  type KeysetPosition,
  type PageQuery,
  type ReadRow,
  type ReadValue,
  type TableSchema,
  type ValueKind,
} from './record-store.js';

/** Rows per page of readAll: few round trips, and a page's rows still die young. */
const READ_ALL_PAGE = 5000;
/** Keys per lookup query (a parser batch): with more, PostgreSQL's planner turned from probing
 * the key index to hashing the whole table (8000 keys: 640 ms against a 1M-row table, where
 * 2000 took 40 ms). */
const KEY_LOOKUP_ROWS = 2000;

/** Reads committed record tables through a Kysely handle of the engine's database. */
export class RecordReader {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly engine: RecordEngine,
  ) {}

  /** Reads one page (at most `limit` rows) after `after`; InvalidPosition when `after` is none. */
  async readPage(table: string, schema: TableSchema, q: PageQuery): Promise<ReadRow[]> {
    const order = orderColumns(schema);
    const kinds = new Map(schema.columns.map((c) => [c.name, c.kind]));
    if (q.after !== null && !this.isPosition(order, kinds, q.after)) throw new InvalidPosition();
    const orderSelect = order.map((name, i) => this.select(name, kinds.get(name), `k${i}`));
    const valueSelect = schema.columns.map((c, i) => this.select(c.name, c.kind, `v${i}`));
    const bind = BIND[this.engine];
    const where: RawBuilder<unknown>[] = q.filters.map(
      ([name, value]) => sql`${sql.ref(name)} = ${bind(value)}`,
    );
    if (q.after !== null) {
      // Positions are bound as read: they already are what the engine compares.
      const refs = sql.join(order.map((n) => sql.ref(n)));
      where.push(sql`(${refs}) > (${sql.join(q.after.map((v) => sql`${v}`))})`);
    }
    const { rows } = await sql<Record<string, ReadValue>>`
      select ${sql.join([...orderSelect, ...valueSelect])}
        from ${sql.table(table)}
       ${where.length > 0 ? sql`where ${sql.join(where, sql` and `)}` : sql``}
       order by ${sql.join(order.map((n) => sql.ref(n)))}
       limit ${q.limit}`.execute(this.db);
    const decoders = schema.columns.map((c) => KINDS[c.kind][this.engine].decode);
    return rows.map((r) => ({
      position: order.map((_, i) => r[`k${i}`] as KeysetPosition[number]),
      values: decoders.map((decode, i) => {
        const v = r[`v${i}`] ?? null;
        return v === null || decode === null ? v : decode(v);
      }),
    }));
  }

  /** Every row, page after page in key order. */
  async *readAll(table: string, schema: TableSchema): AsyncGenerator<ReadValue[][]> {
    let after: KeysetPosition | null = null;
    for (;;) {
      // Record tables never change once committed, so page after page reads one consistent set.
      const rows = await this.readPage(table, schema, { filters: [], after, limit: READ_ALL_PAGE });
      if (rows.length > 0) yield rows.map((r) => r.values);
      const last = rows.at(-1);
      if (rows.length < READ_ALL_PAGE || last === undefined) return;
      after = last.position;
    }
  }

  /** How many values of an int64 column lie beyond ±`bound` (one scan; nulls are not counted). */
  async countBeyond(table: string, column: string, bound: bigint): Promise<number> {
    const bind = BIND[this.engine];
    const ref = sql.ref(column);
    const { rows } = await sql<{ n: number | string }>`
      select count(*) as n from ${sql.table(table)}
       where ${ref} > ${bind(bound)} or ${ref} < ${bind(-bound)}`.execute(this.db);
    return Number(rows[0]?.n ?? 0);
  }

  /** The indexes of `rows` whose primary key `table` holds, ascending: one query, probing the
   * table's unique key index once per row. */
  async keysHeld(table: string, schema: TableSchema, rows: readonly CellValue[][]): Promise<number[]> {
    if (schema.primaryKey.length === 0) return [];
    const held: number[] = [];
    for (let from = 0; from < rows.length; from += KEY_LOOKUP_ROWS) {
      const chunk = rows.slice(from, from + KEY_LOOKUP_ROWS);
      for (const i of await this.keysHeldOnce(table, schema, chunk)) held.push(from + i);
    }
    return held;
  }

  private async keysHeldOnce(
    table: string,
    schema: TableSchema,
    rows: readonly CellValue[][],
  ): Promise<number[]> {
    const key = schema.primaryKey.map((name) => {
      const at = schema.columns.findIndex((c) => c.name === name);
      const column = schema.columns[at];
      if (column === undefined) throw new Error(`primary key column ${name} is not in the table`);
      return { name, at, sqlType: KINDS[column.kind][this.engine].sqlType };
    });
    const bind = BIND[this.engine];
    // The batch's keys go in as ONE parameter each (no limit on the batch): PostgreSQL arrays
    // unnested with their positions, SQLite a JSON array of key tuples. A VALUES list of the
    // keys was measured first: 20x slower on PostgreSQL (the planner hashed the whole table
    // instead of probing its index) and 4x on SQLite (preparing thousands of parameters).
    let probes: RawBuilder<unknown>;
    let position: RawBuilder<unknown>;
    let keyOf: (i: number) => RawBuilder<unknown>;
    switch (this.engine) {
      case 'postgres': {
        const arrays = key.map((k) => {
          const values = rows.map((row) => bind(row[k.at] ?? null));
          return sql`cast(${values} as ${sql.raw(`${k.sqlType}[]`)})`;
        });
        const names = key.map((_, i) => sql.ref(`c${i}`));
        probes = sql`unnest(${sql.join(arrays)}) with ordinality as k(${sql.join([...names, sql.ref('i')])})`;
        position = sql`k.i - 1`;
        keyOf = (i) => sql`k.${sql.ref(`c${i}`)}`;
        break;
      }
      case 'sqlite': {
        const tuples = rows.map((row) => `[${key.map((k) => jsonOf(bind(row[k.at] ?? null))).join(',')}]`);
        probes = sql`json_each(${`[${tuples.join(',')}]`}) as k`;
        position = sql`k.key`;
        keyOf = (i) => sql`(k.value ->> ${sql.lit(i)})`;
        break;
      }
    }
    const matches = key.map((k, i) => sql`t.${sql.ref(k.name)} = ${keyOf(i)}`);
    const { rows: found } = await sql<{ i: number | string }>`
      select ${position} as i from ${probes}
       where exists (select 1 from ${sql.table(table)} as t where ${sql.join(matches, sql` and `)})
       order by 1`.execute(this.db);
    return found.map((f) => Number(f.i));
  }

  /** Whether `after` holds one value of the right type per order column. */
  private isPosition(order: string[], kinds: Map<string, ValueKind>, after: unknown[]): boolean {
    return (
      after.length === order.length &&
      order.every((name, i) => {
        const kind = kinds.get(name);
        const v = after[i];
        // The hidden row number: an integer, which pg gives as text (int8).
        if (kind === undefined) return (typeof v === 'number' && Number.isSafeInteger(v)) || isInt64Text(v);
        return KINDS[kind][this.engine].isPosition(v);
      })
    );
  }

  /** `name as alias`; the hidden row-order column has no kind and is selected as it is. */
  private select(name: string, kind: ValueKind | undefined, alias: string): RawBuilder<unknown> {
    const column = sql.ref(name);
    return kind !== undefined && KINDS[kind][this.engine].readAsText
      ? sql`cast(${column} as text) as ${sql.ref(alias)}`
      : sql`${column} as ${sql.ref(alias)}`;
  }
}

/** A bound key value as JSON for SQLite's json_each: 64-bit integers as their exact digits. */
function jsonOf(v: unknown): string {
  return typeof v === 'bigint' ? v.toString() : JSON.stringify(v);
}
