// A dataset's change log: one table per dataset (chg_<hex>) of primary-key values, typed as the
// dataset's key, each under the batch (a load or schema change) that changed it. Keys are found in
// SQL, set against set, while a load stages (no key passes through the process), and read back
// joined to the current records through the key. The same SQL in both engines but for null-safe
// comparison (SQLite `IS`, PostgreSQL `IS NOT DISTINCT FROM`).
import { sql, type Kysely, type RawBuilder } from 'kysely';
import type pg from 'pg';
import type { Tables } from '../db/tables.js';
import { KINDS, type RecordEngine } from './kinds.js';
import { runStatementsOnThread } from './sqlite-statements.js';
import { jsonObjectRenderer } from './text-render.js';
import { copyRows, POSTGRES_JSON } from './text-postgres.js';
import { SQLITE_JSON } from './text-sqlite.js';
import {
  quoteId,
  ROW_COLUMN,
  type ChangeCapture,
  type ColumnSpec,
  type ChangeRead,
  type ChangeRow,
  type KeysetPosition,
  type TableSchema,
  type ValueKind,
} from './record-store.js';

/** work_mem of a replace's full join on PostgreSQL in all, shared by its parts (the default, 4MB,
 * spilled to disk): as much as the join took in one statement. */
const HASH_JOIN_MEMORY_MB = 256;
/**
 * Parts a replace's full join on PostgreSQL is split into, each on a connection of its own: every
 * part hashes and probes only the keys whose hash falls in it, so the parts run side by side on
 * the server's cores (PostgreSQL 15 runs no full join, and no INSERT's query, in parallel itself).
 */
const REPLACE_JOIN_PARTS = 2; // a power of two: a key's part is its hash's low bits
/** A PostgreSQL hash of a key column's value, by kind: which part of the join a key falls in. */
const POSTGRES_KEY_HASH: Record<ValueKind, (column: string) => string> = {
  text: (c) => `hashtext(${c})`,
  int64: (c) => `hashint8(${c})`,
  float64: (c) => `hashfloat8(${c})`,
  boolean: (c) => `hashint4(${c}::int)`,
};
/** The batch column of a change log; no property can be named so. */
const BATCH_COLUMN = '#batch';

/** Where the change logs are, besides the Kysely handle: SQLite's file, on which scans of tables of
 * `threadRows` rows or more run on a thread (sqlite-statements.ts; KEY_THREAD_ROWS, as for key
 * builds); PostgreSQL's pool, through which the feed's rows are read as COPY's text. */
export type ChangeLogEngine =
  { kind: 'sqlite'; file: string; threadRows: number } | { kind: 'postgres'; pool: pg.Pool };

/** A key value of each kind as PostgreSQL prints it, as the keyset position the pool's parsers
 * would have made (cursors hold positions; those of earlier versions must still compare). */
const POSTGRES_POSITION: Record<ValueKind, (text: string) => KeysetPosition[number]> = {
  text: (t) => t,
  int64: (t) => t,
  float64: Number,
  boolean: (t) => t === 't',
};

/**
 * How PostgreSQL reads a page of the feed: along the log's batch index in key order, each key
 * looked up in the records through their primary key, stopping at the page's end. A log has no
 * statistics (its batch is written and read soon after), and the planner's guesses scanned the
 * whole log or hashed the whole records table: 33–75 ms for a page of 2,000 changes against
 * 200,000 records, 11–15 ms along the keys (EXPLAIN ANALYZE).
 */
const PAGE_BY_KEYS = {
  enable_seqscan: 'off',
  enable_bitmapscan: 'off',
  enable_hashjoin: 'off',
  enable_mergejoin: 'off',
} as const;

/** Writes and reads the change logs of datasets through a Kysely handle of the engine's database. */
export class ChangeLog {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly at: ChangeLogEngine,
  ) {}

  private get engine(): RecordEngine {
    return this.at.kind;
  }

  /** Writes the keys `capture` finds changed into its change log under its batch; returns how many. */
  async capture(c: ChangeCapture): Promise<number> {
    const key = keyOf(c.schema);
    await this.ensureTable(c.changesTable, c.schema);
    const into = `insert into ${quoteId(c.changesTable)} (${quoteId(BATCH_COLUMN)}, ${key.map(quoteId).join(', ')})`;
    const keyOfRow = (alias: string) => key.map((k) => `${alias}.${quoteId(k)}`).join(', ');
    const sameKey = (a: string, b: string) => key.map((k) => `${a}.${quoteId(k)} = ${b}.${quoteId(k)}`);
    const sameValuesOf = (p: string, n: string) =>
      c.schema.columns
        .filter((col) => !key.includes(col.name))
        .map((col) => this.nullSafeEqual(`${p}.${quoteId(col.name)}`, `${n}.${quoteId(col.name)}`));
    const sameValues = sameValuesOf('p', 'n');
    const table = quoteId(c.table);
    if (c.previous === null) {
      // Nothing before: every considered row is a change.
      return c.changed === 'none'
        ? 0
        : this.scan([`${into} select ${c.batch}, ${keyOfRow('n')} from ${table} n`], c.rows);
    }
    const previous = quoteId(c.previous);
    if (c.changed === 'all' && c.removed && this.engine === 'postgres') {
      // A replace on PostgreSQL: one full join of the two tables finds the changed, added and
      // removed keys at once (two anti-joins hashed both tables twice), split by the keys' hash.
      const differs = [`n.${quoteId(key[0] ?? '')} is null`, `p.${quoteId(key[0] ?? '')} is null`];
      const values = sameValues.length > 0 ? [`not (${sameValues.join(' and ')})`] : [];
      const either = key.map((k) => `coalesce(n.${quoteId(k)}, p.${quoteId(k)})`).join(', ');
      const keyHash = keyColumnsOf(c.schema)
        .map((col) => POSTGRES_KEY_HASH[col.kind](quoteId(col.name)))
        .join(' # ');
      const inPart = (from: string, part: number) =>
        `(select * from ${from} where (${keyHash}) & ${REPLACE_JOIN_PARTS - 1} = ${part})`;
      const parts = Array.from({ length: REPLACE_JOIN_PARTS }, (_, part) =>
        this.runAlongKeys(
          'hash',
          `${into} select ${c.batch}, ${either} from ${inPart(table, part)} n full join ${inPart(previous, part)} p
            on ${sameKey('n', 'p').join(' and ')} where ${[...differs, ...values].join(' or ')}`,
        ),
      );
      // Every part ends before a failure is told: a load that fails discards its batch's keys.
      const settled = await Promise.allSettled(parts);
      const failed = settled.find((r) => r.status === 'rejected');
      if (failed !== undefined) throw failed.reason;
      return settled.reduce((sum, r) => sum + (r.status === 'fulfilled' ? r.value : 0), 0);
    }
    let total = 0;
    const scans: string[] = [];
    if (c.changed !== 'none') {
      // A row is a change unless the previous table holds the same key with the same values.
      const unchanged = `exists (select 1 from ${previous} p where ${[...sameKey('p', 'n'), ...sameValues].join(' and ')})`;
      if (c.changed === 'all') {
        const sameRow = [...sameKey('a', 'n'), ...sameValuesOf('a', 'n')];
        scans.push(
          `${into} select ${c.batch}, ${keyOfRow('n')} from ${table} n
            where ${this.unlessAligned(previous, 'n', sameRow, `not ${unchanged}`)}`,
        );
      } else {
        total += await this.writtenAfterCopy(
          `${into} select ${c.batch}, ${keyOfRow('n')} from ${table} n`,
          unchanged,
          c.previous,
          c.rows,
        );
      }
    }
    if (c.removed) {
      // Keys the previous table held and the new one does not: deleted. Both keys' indexes alone
      // answer it, in key order, without reading either table.
      scans.push(
        `${into} select ${c.batch}, ${keyOfRow('p')} from ${previous} p
          where not exists (select 1 from ${table} n where ${sameKey('n', 'p').join(' and ')})`,
      );
    }
    return total + (await this.scan(scans, c.rows));
  }

  /**
   * `otherwise`, a condition on row `row` of a whole-table scan that probes `other`'s key, unless
   * the row of `other` at the same row number (alias `a`) meets `same`: then false, without the
   * probe. A file loaded again keeps most rows where they were (the same export of the same source,
   * a few records edited); its scan then reads `other` in row order beside it instead of at a
   * random place per row. SQLite only, where the row number is the table's own key (a rowid);
   * a row moved is probed as before.
   */
  private unlessAligned(other: string, row: string, same: string[], otherwise: string): string {
    if (this.engine !== 'sqlite') return otherwise;
    const r = quoteId(ROW_COLUMN);
    const aligned = `exists (select 1 from ${other} a where a.${r} = ${row}.${r} and ${same.join(' and ')})`;
    // CASE evaluates its branches lazily: the probe runs only for rows that are not aligned.
    return `case when ${aligned} then 0 else ${otherwise} end`;
  }

  /** Statements that read whole tables of about `rows` rows: on SQLite, large ones on a thread of
   * their own in one transaction (for small ones the scan takes less than a thread's start). */
  private async scan(statements: string[], rows: number): Promise<number> {
    if (statements.length === 0) return 0;
    if (this.at.kind === 'sqlite' && this.at.file !== ':memory:' && rows >= this.at.threadRows) {
      const changes = await runStatementsOnThread(this.at.file, statements);
      return changes.reduce((a, b) => a + b, 0);
    }
    let total = 0;
    for (const statement of statements) total += await this.run(statement);
    return total;
  }

  /** The rows written after the copy of `previous` (numbered after its last row) that `unchanged`
   * does not hold, inserted by `insert`: each probes the previous table's key (on SQLite, on a
   * thread for tables of `rows` rows or more, as scans: an upsert of every record of a large
   * dataset probes as many keys). */
  private async writtenAfterCopy(
    insert: string,
    unchanged: string,
    previous: string,
    tableRows: number,
  ): Promise<number> {
    const row = quoteId(ROW_COLUMN);
    const last = await sql<{ m: number | string | null }>`
      select max(${sql.ref(ROW_COLUMN)}) as m from ${sql.table(previous)}`.execute(this.db);
    const lastRow = Number(last.rows[0]?.m ?? 0);
    const statement = `${insert} where n.${row} > ${lastRow} and not ${unchanged}`;
    // SQLite: the rowid range, then a probe of the key index per written row. PostgreSQL: the
    // same, which it would not choose on its own (below).
    return this.engine === 'sqlite'
      ? this.scan([statement], tableRows)
      : this.runAlongKeys('probe', statement);
  }

  /**
   * Runs a statement that joins a new table to another through their primary keys, the join
   * chosen here: the new table has no statistics yet. `probe`: the previous table's key per row
   * (the planner hashed the whole previous table: 1.6 s for 10k upserted rows against 1M records,
   * where probing takes 0.2 s). `hash`: one table hashed in memory for a part of a replace (2.1 s
   * for 1M records against 1M in one statement; merging along both keys read both heaps in key
   * order, a random read per row when the keys came in random order: 8.5 s). PostgreSQL only.
   */
  private runAlongKeys(how: 'probe' | 'hash', statement: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      await sql`set local enable_mergejoin = off`.execute(trx);
      if (how === 'probe') await sql`set local enable_hashjoin = off`.execute(trx);
      // A 1M-record table's hash takes ~120 MB (~60 a half); a larger one spills to batches on disk.
      else await sql.raw(`set local work_mem = '${HASH_JOIN_MEMORY_MB / REPLACE_JOIN_PARTS}MB'`).execute(trx);
      await sql`set local jit = off`.execute(trx);
      const res = await sql.raw(statement).execute(trx);
      return Number(res.numAffectedRows ?? 0);
    });
  }

  /**
   * The keys of one batch after `after`, in key order, that no batch of `later` changed again,
   * each with the record the current table holds for it (null: deleted), rendered as JSON. A
   * first load's batch (`keysIn: 'records'`) has every key of the current table that no later
   * batch changed: a key there that was not in the first load came with a later batch.
   */
  async read(q: ChangeRead): Promise<ChangeRow[]> {
    const key = keyOf(q.schema);
    const keySchema: TableSchema = { columns: keyColumnsOf(q.schema), primaryKey: key };
    const log = sql.table(q.changesTable);
    const keyRef = (alias: string, k: string) => sql.ref(`${alias}.${k}`);
    // The keys come from the log (`c`), each record from the current table (`r`) if it holds it;
    // or, for a first load's batch, keys and records from the current table alone (`c`).
    const fromRecords = q.keysIn === 'records';
    if (fromRecords && q.current === null) throw new Error("a first load's batch without its records table");
    const recordRef = fromRecords ? 'c' : 'r';
    const selected = [
      ...keySchema.columns.map((col) => this.select(keyRef('c', col.name), col.kind)),
      q.current === null
        ? sql`0`
        : fromRecords
          ? sql`1`
          : sql`case when ${keyRef('r', key[0] ?? '')} is null then 0 else 1 end`,
      ...(q.current === null
        ? []
        : q.schema.columns.map((col) => this.select(keyRef(recordRef, col.name), col.kind))),
    ];
    const source = fromRecords
      ? sql`${sql.table(q.current ?? '')} as c`
      : q.current === null
        ? sql`${log} as c`
        : sql`${log} as c left join ${sql.table(q.current)} as r on ${sql.join(
            key.map((k) => sql`${keyRef('r', k)} = ${keyRef('c', k)}`),
            sql` and `,
          )}`;
    // PostgreSQL reads through COPY, which takes no parameters: values are written in as literals.
    const value = (v: string | number | boolean) => (this.engine === 'postgres' ? sql.lit(v) : sql`${v}`);
    const where: RawBuilder<unknown>[] = fromRecords
      ? []
      : [sql`c.${sql.ref(BATCH_COLUMN)} = ${value(q.batch)}`];
    if (q.after !== null) {
      where.push(sql`(${sql.join(key.map((k) => keyRef('c', k)))}) > (${sql.join(q.after.map(value))})`);
    }
    if (q.later.length > 0) {
      const laterIds = sql.join(q.later.map((id) => sql.lit(id)));
      where.push(
        sql`not exists (select 1 from ${log} as l where ${sql.join(
          key.map((k) => sql`${keyRef('l', k)} = ${keyRef('c', k)}`),
          sql` and `,
        )} and l.${sql.ref(BATCH_COLUMN)} in (${laterIds}))`,
      );
    }
    const n = key.length;
    const keyJson = this.jsonRenderer(keySchema);
    const recordJson = this.jsonRenderer(q.schema);
    const position = this.positionOf(keySchema);
    return this.rows(
      sql`
      select ${sql.join(selected.map((s, i) => sql`${s} as ${sql.ref(`c${i}`)}`))}
        from ${source}
       where ${where.length > 0 ? sql.join(where, sql` and `) : sql`true`}
       order by ${sql.join(key.map((k) => keyRef('c', k)))}
       limit ${value(q.limit)}`,
      (row) => ({
        position: position(row.slice(0, n)),
        key: keyJson(row),
        record: Number(row[n]) === 1 ? recordJson(row, n + 1) : null,
      }),
    );
  }

  /** Deletes the keys of `batches` (pruned history, or a load that did not commit). */
  async discard(changesTable: string, batches: number[]): Promise<void> {
    if (batches.length === 0 || !(await this.exists(changesTable))) return;
    await sql`delete from ${sql.table(changesTable)}
      where ${sql.ref(BATCH_COLUMN)} in (${sql.join(batches.map((b) => sql.lit(b)))})`.execute(this.db);
  }

  private async ensureTable(changesTable: string, schema: TableSchema): Promise<void> {
    if (await this.exists(changesTable)) return;
    const key = keyOf(schema);
    const columns = keyColumnsOf(schema).map(
      (col) => `${quoteId(col.name)} ${KINDS[col.kind][this.engine].sqlType} not null`,
    );
    const table = quoteId(changesTable);
    const keyList = key.map(quoteId).join(', ');
    const batch = quoteId(BATCH_COLUMN);
    await this.run(`create table if not exists ${table} (${batch} bigint not null, ${columns.join(', ')})`);
    // A batch's keys in key order (the feed's pages), and a key's batches (its later changes).
    await this.run(
      `create index if not exists ${quoteId(`${changesTable}_batch`)} on ${table} (${batch}, ${keyList})`,
    );
    await this.run(
      `create index if not exists ${quoteId(`${changesTable}_key`)} on ${table} (${keyList}, ${batch})`,
    );
  }

  private async exists(table: string): Promise<boolean> {
    const found =
      this.engine === 'sqlite'
        ? await sql`select 1 from sqlite_master where type = 'table' and name = ${table}`.execute(this.db)
        : await sql`select 1 from information_schema.tables
            where table_schema = current_schema() and table_name = ${table}`.execute(this.db);
    return found.rows.length > 0;
  }

  private async run(statement: string): Promise<number> {
    const res = await sql.raw(statement).execute(this.db);
    return Number(res.numAffectedRows ?? 0);
  }

  private nullSafeEqual(a: string, b: string): string {
    switch (this.engine) {
      case 'sqlite':
        return `${a} is ${b}`;
      case 'postgres':
        return `${a} is not distinct from ${b}`;
    }
  }

  /** A column as the feed reads it: SQLite's 64-bit integers as text (as numbers they would lose
   * digits beyond 2^53); every PostgreSQL value is read as text (rows). */
  private select(ref: RawBuilder<unknown>, kind: ValueKind): RawBuilder<unknown> {
    return this.engine === 'sqlite' && KINDS[kind].sqlite.readAsText ? sql`cast(${ref} as text)` : ref;
  }

  /**
   * The rows of a query, each made by `row` from its columns' values. On PostgreSQL, each value as
   * the server prints it, read through COPY as exports read tables: the JSON is rendered from that
   * text as each line arrives, with none of the driver's work per value first (a page of 10,000
   * changes spent most of its time there).
   */
  private async rows<T>(
    query: RawBuilder<Record<string, unknown>>,
    row: (values: readonly unknown[]) => T,
  ): Promise<T[]> {
    switch (this.at.kind) {
      case 'sqlite': {
        const { rows } = await query.execute(this.db);
        return rows.map((r) => row(Object.values(r)));
      }
      case 'postgres': {
        const { sql: text, parameters } = query.compile(this.db);
        if (parameters.length > 0) throw new Error('a query read through COPY cannot take parameters');
        return copyRows(this.at.pool, text, row, PAGE_BY_KEYS);
      }
    }
  }

  /** The JSON object of a table's columns from their values as `rows` reads them, kept for a page. */
  private jsonRenderer(schema: TableSchema): (values: readonly unknown[], from?: number) => string {
    switch (this.engine) {
      case 'sqlite':
        return jsonObjectRenderer(
          schema,
          schema.columns.map((c) => SQLITE_JSON[c.kind]),
          'kept',
        ) as (values: readonly unknown[], from?: number) => string;
      case 'postgres':
        return jsonObjectRenderer(
          schema,
          schema.columns.map((c) => POSTGRES_JSON[c.kind]),
          'kept',
        ) as (values: readonly unknown[], from?: number) => string;
    }
  }

  /** A key's keyset position from its values as `rows` reads them. */
  private positionOf(keySchema: TableSchema): (values: readonly unknown[]) => KeysetPosition {
    switch (this.engine) {
      case 'sqlite':
        return (values) => values as KeysetPosition;
      case 'postgres': {
        const parse = keySchema.columns.map((c) => POSTGRES_POSITION[c.kind]);
        return (values) =>
          values.map((v, i) => (parse[i] as (text: string) => KeysetPosition[number])(v as string));
      }
    }
  }
}

function keyOf(schema: TableSchema): string[] {
  if (schema.primaryKey.length === 0) throw new Error('a change log needs a table with a primary key');
  return schema.primaryKey;
}

/** The primary key's columns, in the key's order. */
function keyColumnsOf(schema: TableSchema): ColumnSpec[] {
  return keyOf(schema).map((k) => {
    const column = schema.columns.find((c) => c.name === k);
    if (column === undefined) throw new Error(`primary key column ${k} is not in the table`);
    return column;
  });
}
