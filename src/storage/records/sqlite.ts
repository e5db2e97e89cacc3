// SQLite writer: batched multi-row `INSERT OR REPLACE` on a dedicated connection. Rows are
// gathered into chunks and each chunk is written in one synchronous transaction; the event loop
// runs between chunks, and no write lock is ever held across an await (the API's connection would
// otherwise block on it).
import type { Readable } from 'node:stream';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { openSqliteConnection } from '../db/database.js';
import type { ExportFormat, Tables } from '../db/tables.js';
import { BIND, columnDefinitions } from './kinds.js';
import { RecordReader } from './read.js';
import { sqliteText } from './text-sqlite.js';
import {
  quoteId,
  ROW_COLUMN,
  tablePrefix,
  type CellValue,
  type PageQuery,
  type ReadRow,
  type ReadValue,
  type RecordStore,
  type StagingOptions,
  type StagingResult,
  type StagingWriter,
  type TableSchema,
} from './record-store.js';

const ROWS_PER_STATEMENT = 200;
/** Rows per transaction (about one parser batch): rows die young, which spares the GC, and the API never waits long. */
const ROWS_PER_CHUNK = 1000;
/** Rows copied per transaction when a staging table starts from a committed one. */
const COPY_ROWS_PER_CHUNK = 20_000;
/** A cell as SQLite takes it: booleans as 0/1 (kinds.ts). */
const bind = BIND.sqlite;

/** Record tables in the service's SQLite file. */
export class SqliteRecordStore implements RecordStore {
  private readonly reader: RecordReader;

  constructor(
    private readonly file: string,
    /** The metadata connection, used through Kysely so its transactions are respected. */
    private readonly db: Kysely<Tables>,
  ) {
    this.reader = new RecordReader(db, 'sqlite');
  }

  async createStaging(
    table: string,
    schema: TableSchema,
    signal?: AbortSignal,
    options: StagingOptions = {},
  ): Promise<StagingWriter> {
    const conn = openSqliteConnection(this.file);
    let copied = { rows: 0, lastRow: 0 };
    try {
      conn.pragma('cache_size = -65536');
      conn.exec(`drop table if exists ${quoteId(table)}`);
      conn.exec(
        `create table ${quoteId(table)} (${quoteId(ROW_COLUMN)} integer primary key, ${columnDefinitions(schema, 'sqlite')})`,
      );
      if (schema.primaryKey.length > 0) {
        conn.exec(
          `create unique index ${quoteId(`${table}_pk`)} on ${quoteId(table)} (${schema.primaryKey.map(quoteId).join(', ')})`,
        );
      }
      if (options.copyFrom !== undefined)
        copied = await copyRows(conn, options.copyFrom, table, schema, signal);
    } catch (err) {
      conn.close();
      if (options.copyFrom !== undefined) await this.dropTable(table);
      throw err;
    }
    const drop = () => this.dropTable(table);
    return new SqliteStagingWriter(conn, table, schema.columns.length + 1, drop, copied, signal);
  }

  keysHeld(table: string, schema: TableSchema, rows: readonly CellValue[][]): Promise<number[]> {
    return this.reader.keysHeld(table, schema, rows);
  }

  readPage(table: string, schema: TableSchema, query: PageQuery): Promise<ReadRow[]> {
    return this.reader.readPage(table, schema, query);
  }

  readAll(table: string, schema: TableSchema): AsyncGenerator<ReadValue[][]> {
    return this.reader.readAll(table, schema);
  }

  streamText(table: string, schema: TableSchema, format: ExportFormat): Readable {
    return sqliteText(this.file, table, schema, format);
  }

  async dropTable(table: string): Promise<void> {
    await sql`drop table if exists ${sql.table(table)}`.execute(this.db);
  }

  async listTables(datasetId: string): Promise<string[]> {
    const prefix = tablePrefix(datasetId);
    const { rows } = await sql<{ name: string }>`select name from sqlite_master
      where type = 'table' and substr(name, 1, ${prefix.length}) = ${prefix}`.execute(this.db);
    return rows.map((r) => r.name);
  }
}

/**
 * Copies every row of the committed table `from` into `to`, in row order and keeping row numbers,
 * a chunk per transaction (`#row` is the rowid: each chunk is a range scan) so the event loop runs
 * between chunks and no write lock is held across an await. Returns the count and the last row.
 */
async function copyRows(
  conn: BetterSqlite3.Database,
  from: string,
  to: string,
  schema: TableSchema,
  signal?: AbortSignal,
): Promise<{ rows: number; lastRow: number }> {
  const columns = [ROW_COLUMN, ...schema.columns.map((c) => c.name)].map(quoteId).join(', ');
  const copyChunk = conn.prepare(
    `insert into ${quoteId(to)} (${columns}) select ${columns} from ${quoteId(from)}
      where ${quoteId(ROW_COLUMN)} > ? order by ${quoteId(ROW_COLUMN)} limit ${COPY_ROWS_PER_CHUNK}`,
  );
  const lastRow = conn.prepare(`select coalesce(max(${quoteId(ROW_COLUMN)}), 0) as m from ${quoteId(to)}`);
  let rows = 0;
  let last = 0;
  for (;;) {
    signal?.throwIfAborted();
    const changes = conn.transaction(() => copyChunk.run(last).changes)();
    if (changes === 0) return { rows, lastRow: last };
    rows += changes;
    last = (lastRow.get() as { m: number }).m;
    await yieldToLoop();
  }
}

class SqliteStagingWriter implements StagingWriter {
  private pending: CellValue[][] = [];
  private written = 0;
  private readonly statements = new Map<number, BetterSqlite3.Statement>();
  private closed = false;

  constructor(
    private readonly conn: BetterSqlite3.Database,
    readonly table: string,
    private readonly width: number,
    private readonly drop: () => Promise<void>,
    /** Rows copied in at the start and the last row number among them; written rows follow it. */
    private readonly copied: { rows: number; lastRow: number },
    private readonly signal?: AbortSignal,
  ) {}

  async write(rows: CellValue[][]): Promise<void> {
    for (const row of rows) this.pending.push(row);
    if (this.pending.length >= ROWS_PER_CHUNK) await this.flush();
  }

  async finish(): Promise<StagingResult> {
    await this.flush();
    // Copied rows still there have row numbers up to the copy's last; the rest are written rows.
    const counts = this.conn
      .prepare(
        `select count(*) as n, coalesce(sum(${quoteId(ROW_COLUMN)} <= ?), 0) as kept from ${quoteId(this.table)}`,
      )
      .get(this.copied.lastRow) as { n: number; kept: number };
    this.close();
    return {
      rowsWritten: this.written,
      rowsLoaded: counts.n,
      duplicatesCollapsed: this.written - (counts.n - counts.kept),
      rowsCopied: this.copied.rows,
      rowsReplaced: this.copied.rows - counts.kept,
    };
  }

  async abort(): Promise<void> {
    this.close();
    await this.drop();
  }

  private async flush(): Promise<void> {
    this.signal?.throwIfAborted();
    const rows = this.pending;
    this.pending = [];
    if (rows.length === 0) return;
    const insertChunk = this.conn.transaction(() => {
      for (let i = 0; i < rows.length; i += ROWS_PER_STATEMENT) {
        const count = Math.min(ROWS_PER_STATEMENT, rows.length - i);
        // One flat parameter array per statement, filled by index (no per-row arrays or slices).
        const params = new Array<unknown>(count * this.width);
        let at = 0;
        for (let r = i; r < i + count; r++) {
          params[at++] = this.copied.lastRow + ++this.written;
          for (const v of rows[r] ?? []) params[at++] = bind(v);
        }
        this.statement(count).run(params);
      }
    });
    insertChunk();
    await yieldToLoop();
  }

  private statement(rows: number): BetterSqlite3.Statement {
    let stmt = this.statements.get(rows);
    if (stmt === undefined) {
      const tuple = `(${Array<string>(this.width).fill('?').join(',')})`;
      stmt = this.conn.prepare(
        `insert or replace into ${quoteId(this.table)} values ${Array<string>(rows).fill(tuple).join(',')}`,
      );
      this.statements.set(rows, stmt);
    }
    return stmt;
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.conn.close();
  }
}
