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
  type StagingResult,
  type StagingWriter,
  type TableSchema,
} from './record-store.js';

const ROWS_PER_STATEMENT = 200;
/** Rows per transaction (about one parser batch): rows die young, which spares the GC, and the API never waits long. */
const ROWS_PER_CHUNK = 1000;
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

  async createStaging(table: string, schema: TableSchema, signal?: AbortSignal): Promise<StagingWriter> {
    const conn = openSqliteConnection(this.file);
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
    } catch (err) {
      conn.close();
      throw err;
    }
    const drop = () => this.dropTable(table);
    return new SqliteStagingWriter(conn, table, schema.columns.length + 1, drop, signal);
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
    private readonly signal?: AbortSignal,
  ) {}

  async write(rows: CellValue[][]): Promise<void> {
    for (const row of rows) this.pending.push(row);
    if (this.pending.length >= ROWS_PER_CHUNK) await this.flush();
  }

  async finish(): Promise<StagingResult> {
    await this.flush();
    const { n } = this.conn.prepare(`select count(*) as n from ${quoteId(this.table)}`).get() as {
      n: number;
    };
    this.close();
    return { rowsWritten: this.written, rowsLoaded: n, duplicatesCollapsed: this.written - n };
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
          params[at++] = ++this.written;
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
