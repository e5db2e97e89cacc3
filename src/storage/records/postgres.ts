// PostgreSQL writer: COPY FROM STDIN into a table without constraints (much faster than COPY into
// an indexed table), then the primary key is added; only if that meets duplicates are the earlier
// rows of each key deleted (by the hidden row-order column) before adding it again. A table that
// starts as a copy of a committed one first loses the copied rows whose key a written row has; a
// delete by key COPYs the keys alone after the copy, and deletes them with what they name.
import { once } from 'node:events';
import type { Readable } from 'node:stream';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { Kysely } from 'kysely';
import type { ExportFormat, Tables } from '../db/tables.js';
import { formatCopyRows } from './copy-text.js';
import { columnDefinitions, copiedSelect } from './kinds.js';
import { ChangeLog } from './change-log.js';
import { RecordReader } from './read.js';
import { postgresText } from './text-postgres.js';
import {
  quoteId,
  ROW_COLUMN,
  tablePrefix,
  type CellValue,
  type ChangeCapture,
  type ChangeRead,
  type ChangeRow,
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

const UNIQUE_VIOLATION = '23505';
/**
 * Rows per COPY write: ~45 KB of text. V8 puts strings over 128 KB in its large-object space,
 * freed only by full collections; writing whole 2000-row batches (~180 KB) that way let a
 * 10M-row load's RSS creep up to 300 MiB.
 */
const ROWS_PER_WRITE = 500;
/** maintenance_work_mem while the primary key is built (PostgreSQL's default is 64MB). */
const INDEX_BUILD_MEMORY = '256MB';

/** Record tables in the service's PostgreSQL database (its schema when confined to one). */
export class PostgresRecordStore implements RecordStore {
  private readonly reader: RecordReader;
  private readonly changes: ChangeLog;

  constructor(
    private readonly pool: pg.Pool,
    /** The same pool through Kysely, for reading. */
    db: Kysely<Tables>,
  ) {
    this.reader = new RecordReader(db, 'postgres');
    this.changes = new ChangeLog(db, { kind: 'postgres', pool });
  }

  async createStaging(
    table: string,
    schema: TableSchema,
    signal?: AbortSignal,
    options: StagingOptions = {},
  ): Promise<StagingWriter> {
    const written = [ROW_COLUMN, ...writtenColumns(schema, options)].map(quoteId).join(', ');
    const client = await this.pool.connect();
    try {
      await client.query(`drop table if exists ${quoteId(table)}`);
      await client.query(
        `create table ${quoteId(table)} (${quoteId(ROW_COLUMN)} bigint not null, ${columnDefinitions(schema, 'postgres')})`,
      );
      const columns = [ROW_COLUMN, ...schema.columns.map((c) => c.name)].map(quoteId).join(', ');
      let copied = { rows: 0, lastRow: 0 };
      if (options.copyFrom !== undefined) {
        // One statement inside the server, into the table still without constraints (as COPY).
        const source = quoteId(options.copyFrom);
        const last = await client.query<{ m: string }>(
          `select coalesce(max(${quoteId(ROW_COLUMN)}), 0) as m from ${source}`,
        );
        // Under a changed schema, each column from its source (kinds.ts); else the same columns.
        const { select, params } =
          options.copyColumns === undefined
            ? { select: columns, params: [] }
            : copiedSelect(schema, options.copyColumns, 'postgres', (n) => `$${n}`);
        const selected = options.copyColumns === undefined ? select : `${quoteId(ROW_COLUMN)}, ${select}`;
        const res = await client.query(
          `insert into ${quoteId(table)} (${columns}) select ${selected} from ${source}`,
          params,
        );
        copied = { rows: res.rowCount ?? 0, lastRow: Number(last.rows[0]?.m ?? 0) };
        signal?.throwIfAborted();
      }
      const copy = client.query(copyFrom(`copy ${quoteId(table)} (${written}) from stdin`));
      const drop = () => this.dropTable(table);
      // Statistics for the planner, gathered after the job: nothing waits for them, and until
      // they come the primary key already serves pages and lookups.
      const analyze = () => void this.pool.query(`analyze ${quoteId(table)}`).catch(() => undefined);
      const writes = options.writes ?? 'records';
      return new PostgresStagingWriter(
        client,
        copy,
        table,
        schema.primaryKey,
        writes,
        copied,
        drop,
        analyze,
        signal,
      );
    } catch (err) {
      client.release();
      if (options.copyFrom !== undefined) await this.dropTable(table);
      throw err;
    }
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
    return postgresText(this.pool, table, schema, format);
  }

  async dropTable(table: string): Promise<void> {
    await this.pool.query(`drop table if exists ${quoteId(table)}`);
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
    const res = await this.pool.query<{ table_name: string }>(
      `select table_name from information_schema.tables
        where table_schema = current_schema() and substr(table_name, 1, $1) = $2`,
      [prefix.length, prefix],
    );
    return res.rows.map((r) => r.table_name);
  }
}

class PostgresStagingWriter implements StagingWriter {
  private written = 0;
  private failure: Error | null = null;
  private released = false;

  constructor(
    private readonly client: pg.PoolClient,
    private readonly copy: ReturnType<typeof copyFrom>,
    readonly table: string,
    private readonly primaryKey: string[],
    /** What `write` takes (StagingOptions.writes). */
    private readonly writes: 'records' | 'keysToDelete',
    /** Rows copied in at the start and the last row number among them; written rows follow it. */
    private readonly copied: { rows: number; lastRow: number },
    private readonly drop: () => Promise<void>,
    private readonly analyzeLater: () => void,
    private readonly signal?: AbortSignal,
  ) {
    copy.on('error', (err: Error) => (this.failure = err));
  }

  async write(rows: CellValue[][]): Promise<void> {
    for (let from = 0; from < rows.length; from += ROWS_PER_WRITE) {
      this.signal?.throwIfAborted();
      if (this.failure !== null) throw this.failure;
      const to = Math.min(rows.length, from + ROWS_PER_WRITE);
      const text = formatCopyRows(rows, this.copied.lastRow + this.written + 1, from, to);
      this.written += to - from;
      if (!this.copy.write(text)) await Promise.race([once(this.copy, 'drain'), once(this.copy, 'error')]);
    }
  }

  async finish(): Promise<StagingResult> {
    const done = once(this.copy, 'finish');
    this.copy.end();
    await done;
    if (this.failure !== null) throw this.failure;
    // One transaction with SET LOCAL, never a session-level SET: behind a pooler in transaction
    // mode (PgBouncer) each statement outside a transaction may run on another server connection,
    // and a SET would stay on the one it ran on, for whichever client gets that connection next.
    // The key is built by one sort of the whole table: room for it in memory saves a merge on
    // disk. JIT is off: compiling the deletes below cost a second more than running them.
    await this.client.query(
      `begin; set local maintenance_work_mem = '${INDEX_BUILD_MEMORY}'; set local jit = off`,
    );
    let changes: { replaced: number; collapsed: number; deleted: number };
    try {
      if (this.primaryKey.length === 0) {
        await this.client.query(
          `alter table ${quoteId(this.table)} add primary key (${quoteId(ROW_COLUMN)})`,
        );
        changes = { replaced: 0, collapsed: 0, deleted: 0 };
      } else if (this.writes === 'keysToDelete') {
        changes = await this.deleteByKey();
      } else {
        changes = { ...(await this.buildKey()), deleted: 0 };
      }
      await this.client.query('commit');
    } catch (err) {
      await this.client.query('rollback').catch(() => undefined);
      throw err;
    }
    this.release();
    this.analyzeLater();
    const { replaced, collapsed, deleted } = changes;
    const kept = this.writes === 'keysToDelete' ? 0 : this.written - collapsed;
    return {
      rowsWritten: this.written,
      rowsLoaded: this.copied.rows - replaced - deleted + kept,
      duplicatesCollapsed: collapsed,
      rowsCopied: this.copied.rows,
      rowsReplaced: replaced,
      rowsDeleted: deleted,
    };
  }

  /** Adds the primary key, after removing the copied rows a written row replaces and, only if the
   * key meets duplicates, every written row but the last of its key. */
  private async buildKey(): Promise<{ replaced: number; collapsed: number }> {
    const table = quoteId(this.table);
    const row = quoteId(ROW_COLUMN);
    const key = this.primaryKey.map(quoteId).join(', ');
    const replaced = await this.deleteCopiedRowsOfWrittenKeys();
    await this.client.query('savepoint key_build');
    try {
      await this.client.query(`alter table ${table} add primary key (${key})`);
      return { replaced, collapsed: 0 };
    } catch (err) {
      if ((err as { code?: string }).code !== UNIQUE_VIOLATION) throw err;
      await this.client.query('rollback to savepoint key_build');
      // Duplicates among the written rows: the last row of each key wins, so keep the highest
      // row number and delete the rest.
      const res = await this.client.query(
        `delete from ${table} t using (
           select ${row} as r, row_number() over (partition by ${key} order by ${row} desc) as n
             from ${table} where ${row} > ${this.copied.lastRow}) d
         where d.n > 1 and t.${row} = d.r`,
      );
      await this.client.query(`alter table ${table} add primary key (${key})`);
      return { replaced, collapsed: res.rowCount ?? 0 };
    }
  }

  /** A delete by key: counts the distinct written keys, deletes the copied rows they name, then
   * the written keys themselves, and adds the key to what remains (copied rows, unique already).
   * Set-based statements inside the server: no key comes back to the process. */
  private async deleteByKey(): Promise<{ replaced: number; collapsed: number; deleted: number }> {
    const table = quoteId(this.table);
    const written = `${quoteId(ROW_COLUMN)} > ${this.copied.lastRow}`;
    const key = this.primaryKey.map(quoteId).join(', ');
    const distinct = await this.client.query<{ keys: string }>(
      `select count(*) as keys from (select distinct ${key} from ${table} where ${written}) k`,
    );
    const keys = Number(distinct.rows[0]?.keys ?? 0);
    const deleted = await this.deleteCopiedRowsOfWrittenKeys();
    await this.client.query(`delete from ${table} where ${written}`);
    await this.client.query(`alter table ${table} add primary key (${key})`);
    return { replaced: 0, collapsed: this.written - keys, deleted };
  }

  /** Deletes the copied rows whose key a written row has; returns how many went. */
  private async deleteCopiedRowsOfWrittenKeys(): Promise<number> {
    if (this.copied.rows === 0 || this.written === 0) return 0;
    const table = quoteId(this.table);
    const row = quoteId(ROW_COLUMN);
    // One hash join of the written rows against the copy, not a failed key build and a sort of the
    // whole table. Written as IN: on the fresh table (no statistics) the planner then hashes the
    // distinct written keys; a join (or DELETE ... USING) was planned as a merge join sorting all
    // rows on disk (3x slower).
    const keyOf = (alias: string) => this.primaryKey.map((k) => `${alias}.${quoteId(k)}`).join(', ');
    const res = await this.client.query(
      `delete from ${table} c
        where c.${row} <= ${this.copied.lastRow}
          and (${keyOf('c')}) in (select ${keyOf('w')} from ${table} w where w.${row} > ${this.copied.lastRow})`,
    );
    return res.rowCount ?? 0;
  }

  async abort(): Promise<void> {
    if (!this.released) {
      this.copy.destroy();
      // A connection in the middle of COPY cannot be reused: discard it, drop through another.
      this.release(true);
    }
    await this.drop();
  }

  private release(discard = false): void {
    if (this.released) return;
    this.released = true;
    this.client.release(discard ? new Error('load aborted') : undefined);
  }
}
