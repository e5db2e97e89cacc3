// SQLite writer: batched multi-row INSERTs on a dedicated connection into a table whose only key is
// the hidden row number, so rows land at the table's end whatever order their keys come in; the
// primary key's unique index is built once, by one sort, when the file is read (as PostgreSQL's
// writer adds its key after COPY; sqlite-key.ts, on a thread of its own for a large table). Only if
// that meets duplicates are the earlier rows of each key deleted first. Rows are gathered into chunks and each chunk is written in one synchronous
// transaction; the event loop runs between chunks, and no write lock is ever held across an await
// (the API's connection would otherwise wait for it). A write that meets another connection's lock
// is tried again after a pause, the event loop running (whenUnlocked). A delete by key writes the keys the same way,
// after a copy of the dataset's rows, and deletes with two set-based statements when the file is read.
import type { Readable } from 'node:stream';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type BetterSqlite3 from 'better-sqlite3';
import { sql, type Kysely } from 'kysely';
import { openSqliteConnection } from '../db/database.js';
import { whenUnlocked } from '../db/sqlite-dialect.js';
import type { ExportFormat, Tables } from '../db/tables.js';
import { BIND, columnDefinitions, copiedSelect } from './kinds.js';
import { ChangeLog } from './change-log.js';
import { RecordReader } from './read.js';
import { finishKey, finishKeyOnThread, KEY_THREAD_ROWS, type KeyWork } from './sqlite-key.js';
import { sqliteText } from './text-sqlite.js';
import {
  quoteId,
  ROW_COLUMN,
  tablePrefix,
  type CellValue,
  type ChangeCapture,
  type ChangeRead,
  type ChangeRow,
  type CopiedColumn,
  type PageQuery,
  type ReadRow,
  type ReadValue,
  type RecordStore,
  type StagingOptions,
  type StagingResult,
  type StagingWriter,
  type TableSchema,
  writtenColumns,
} from './record-store.js';

/** Rows per INSERT statement, at most (multi-row VALUES: one statement's overhead for many rows). */
const ROWS_PER_STATEMENT = 200;
/** SQLite's limit on the parameters of one statement (SQLITE_MAX_VARIABLE_NUMBER since 3.32). */
const MAX_PARAMETERS = 32_766;
/** Rows per transaction (about one parser batch): rows die young, which spares the GC, and the API never waits long. */
const ROWS_PER_CHUNK = 1000;
/** Rows copied per transaction when a staging table starts from a committed one. */
const COPY_ROWS_PER_CHUNK = 20_000;
/** A cell as SQLite takes it: booleans as 0/1 (kinds.ts). */
const bind = BIND.sqlite;

/** Record tables in the service's SQLite file. */
export class SqliteRecordStore implements RecordStore {
  private readonly reader: RecordReader;
  private readonly changes: ChangeLog;

  constructor(
    private readonly file: string,
    /** The metadata connection, used through Kysely so its transactions are respected. */
    private readonly db: Kysely<Tables>,
    /** `keyThreadRows`: tables of at least so many rows get their key on a thread (KEY_THREAD_ROWS). */
    private readonly options: { keyThreadRows?: number } = {},
  ) {
    this.reader = new RecordReader(db, 'sqlite');
    this.changes = new ChangeLog(db, {
      kind: 'sqlite',
      file,
      threadRows: options.keyThreadRows ?? KEY_THREAD_ROWS,
    });
  }

  async createStaging(
    table: string,
    schema: TableSchema,
    signal?: AbortSignal,
    options: StagingOptions = {},
  ): Promise<StagingWriter> {
    const shape: WrittenShape = {
      writes: options.writes ?? 'records',
      columns: writtenColumns(schema, options),
    };
    const conn = openSqliteConnection(this.file, 'pass');
    // Its writes wait for another connection's lock with the event loop running (whenUnlocked).
    conn.pragma('busy_timeout = 0');
    let copied = { rows: 0, lastRow: 0 };
    try {
      await whenUnlocked(() => conn.exec(`drop table if exists ${quoteId(table)}`));
      await whenUnlocked(() =>
        conn.exec(
          `create table ${quoteId(table)} (${quoteId(ROW_COLUMN)} integer primary key, ${columnDefinitions(schema, 'sqlite')})`,
        ),
      );
      if (options.copyFrom !== undefined)
        copied = await copyRows(conn, options.copyFrom, table, schema, options.copyColumns, signal);
    } catch (err) {
      conn.close();
      if (options.copyFrom !== undefined) await this.dropTable(table);
      throw err;
    }
    const drop = () => this.dropTable(table);
    const key = { file: this.file, threadRows: this.options.keyThreadRows ?? KEY_THREAD_ROWS };
    return new SqliteStagingWriter(conn, table, schema, shape, drop, copied, key, signal);
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

  countBeyond(table: string, column: string, bound: bigint): Promise<number> {
    return this.reader.countBeyond(table, column, bound);
  }

  streamText(table: string, schema: TableSchema, format: ExportFormat): Readable {
    return sqliteText(this.file, table, schema, format);
  }

  async dropTable(table: string): Promise<void> {
    await sql`drop table if exists ${sql.table(table)}`.execute(this.db);
  }

  captureChanges(capture: ChangeCapture): Promise<number> {
    return this.changes.capture(capture);
  }

  readChanges(query: ChangeRead): Promise<ChangeRow[]> {
    return this.changes.read(query);
  }

  discardChanges(changesTable: string, batches: number[]): Promise<void> {
    return this.changes.discard(changesTable, batches);
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
  sources: CopiedColumn[] | undefined,
  signal?: AbortSignal,
): Promise<{ rows: number; lastRow: number }> {
  const columns = [ROW_COLUMN, ...schema.columns.map((c) => c.name)].map(quoteId).join(', ');
  // Under a changed schema, each column from its source (kinds.ts); else the same columns.
  const { select, params } =
    sources === undefined
      ? { select: columns, params: [] }
      : copiedSelect(schema, sources, 'sqlite', () => '?');
  const selected = sources === undefined ? select : `${quoteId(ROW_COLUMN)}, ${select}`;
  const copyChunk = conn.prepare(
    `insert into ${quoteId(to)} (${columns}) select ${selected} from ${quoteId(from)}
      where ${quoteId(ROW_COLUMN)} > ? order by ${quoteId(ROW_COLUMN)} limit ${COPY_ROWS_PER_CHUNK}`,
  );
  const lastRow = conn.prepare(`select coalesce(max(${quoteId(ROW_COLUMN)}), 0) as m from ${quoteId(to)}`);
  let rows = 0;
  let last = 0;
  for (;;) {
    signal?.throwIfAborted();
    const changes = await whenUnlocked(conn.transaction(() => copyChunk.run(...params, last).changes));
    if (changes === 0) return { rows, lastRow: last };
    rows += changes;
    last = (lastRow.get() as { m: number }).m;
    await yieldToLoop();
  }
}

/** What a staging writer takes (StagingOptions.writes) and the columns that fills, after `#row`. */
interface WrittenShape {
  writes: 'records' | 'keysToDelete';
  columns: string[];
}

class SqliteStagingWriter implements StagingWriter {
  private pending: CellValue[][] = [];
  private written = 0;
  private readonly statements = new Map<number, BetterSqlite3.Statement>();
  private closed = false;
  /** Values per row: the written columns (the row number is SQLite's to assign). */
  private readonly width: number;
  /** Rows per statement: ROWS_PER_STATEMENT, fewer for a schema too wide for that many. */
  private readonly rowsPerStatement: number;

  constructor(
    private readonly conn: BetterSqlite3.Database,
    readonly table: string,
    private readonly schema: TableSchema,
    private readonly shape: WrittenShape,
    private readonly drop: () => Promise<void>,
    /** Rows copied in at the start and the last row number among them; written rows follow it. */
    private readonly copied: { rows: number; lastRow: number },
    /** The service's file and the rows from which the key is built on a thread (KEY_THREAD_ROWS). */
    private readonly key: { file: string; threadRows: number },
    private readonly signal?: AbortSignal,
  ) {
    this.width = shape.columns.length;
    this.rowsPerStatement = Math.min(ROWS_PER_STATEMENT, Math.floor(MAX_PARAMETERS / this.width));
  }

  async write(rows: CellValue[][]): Promise<void> {
    for (const row of rows) this.pending.push(row);
    if (this.pending.length >= ROWS_PER_CHUNK) await this.flush();
  }

  async finish(): Promise<StagingResult> {
    await this.flush();
    const work: KeyWork = {
      table: this.table,
      schema: this.schema,
      writes: this.shape.writes,
      copied: this.copied,
      written: this.written,
    };
    // The writer's connection holds no transaction between chunks: the thread's takes the lock.
    const { replaced, collapsed, deleted } =
      this.copied.rows + this.written >= this.key.threadRows
        ? await finishKeyOnThread(this.key.file, work)
        : await whenUnlocked(() => finishKey(this.conn, work));
    this.close();
    const kept = this.shape.writes === 'keysToDelete' ? 0 : this.written - collapsed;
    return {
      rowsWritten: this.written,
      rowsLoaded: this.copied.rows - replaced - deleted + kept,
      duplicatesCollapsed: collapsed,
      rowsCopied: this.copied.rows,
      rowsReplaced: replaced,
      rowsDeleted: deleted,
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
    // Each row takes the next row number (`#row` is the rowid: SQLite numbers it after the
    // table's last, which the copied rows and the earlier chunks end with): nothing to bind for
    // it. A chunk tried again after a lock was rolled back, so it is numbered the same.
    const insertChunk = this.conn.transaction(() => {
      for (let i = 0; i < rows.length; i += this.rowsPerStatement) {
        const count = Math.min(this.rowsPerStatement, rows.length - i);
        // One flat parameter array per statement, filled by index (no per-row arrays or slices).
        const params = new Array<unknown>(count * this.width);
        let at = 0;
        for (let r = i; r < i + count; r++) for (const v of rows[r] ?? []) params[at++] = bind(v);
        this.statement(count).run(params);
      }
    });
    await whenUnlocked(insertChunk);
    this.written += rows.length;
    await yieldToLoop();
  }

  private statement(rows: number): BetterSqlite3.Statement {
    let stmt = this.statements.get(rows);
    if (stmt === undefined) {
      const columns = this.shape.columns.map(quoteId).join(', ');
      const tuple = `(${Array<string>(this.width).fill('?').join(',')})`;
      stmt = this.conn.prepare(
        `insert into ${quoteId(this.table)} (${columns}) values ${Array<string>(rows).fill(tuple).join(',')}`,
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
