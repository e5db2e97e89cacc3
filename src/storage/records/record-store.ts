// The record store seam: every load writes a new table (a generation) that is complete before it
// becomes visible, so readers see all old or all new records. SQLite and PostgreSQL implement it;
// how each engine keeps and returns values stays behind it, so callers never ask which engine.
import type { Readable } from 'node:stream';
import type { ExportFormat } from '../db/tables.js';

/** How a column's values are kept; each column type of the domain maps to one (see kinds.ts). */
export type ValueKind = 'text' | 'int64' | 'float64' | 'boolean';

/** The range of an int64 column (a signed 64-bit integer on every engine). */
export const INT64_MIN = -(2n ** 63n);
export const INT64_MAX = 2n ** 63n - 1n;

/** One value as written: 64-bit integers beyond 2^53 as bigint. */
export type CellValue = string | number | bigint | boolean | null;

/** One value as read: 64-bit integers as their decimal text (so they stay exact), booleans as booleans. */
export type ReadValue = string | number | boolean | null;

/** One column of a records table. */
export interface ColumnSpec {
  name: string;
  kind: ValueKind;
}

/** The shape of a records table; rows are aligned with `columns`. */
export interface TableSchema {
  columns: ColumnSpec[];
  /** Column names; without any, rows are unique and ordered by their position in the file. */
  primaryKey: string[];
}

/** Where a keyset page ends: the order-column values of its last row, as the engine gives them. */
export type KeysetPosition = (string | number | boolean)[];

/** What one page holds: rows equal to every filter, in key order, after `after`. */
export interface PageQuery {
  /** Column name → the value the column must equal. */
  filters: [string, Exclude<CellValue, null>][];
  /** The position of the last row of the previous page; null for the first page. */
  after: KeysetPosition | null;
  limit: number;
}

/** A page asked to start after a position that is not one of the table (a forged page token). */
export class InvalidPosition extends Error {
  constructor() {
    super('the keyset position does not fit the order columns of the table');
  }
}

/** A row as read, aligned with the table's columns, and its keyset position. */
export interface ReadRow {
  values: ReadValue[];
  position: KeysetPosition;
}

/** Counts of a finished staging table. */
export interface StagingResult {
  /** Rows written through `write` (the file's valid rows; its keys, for `writes: 'keysToDelete'`). */
  rowsWritten: number;
  /** Rows the finished table holds. */
  rowsLoaded: number;
  /** Written rows replaced by a later written row of the same primary key (keysToDelete: written
   * keys that repeat another written key). */
  duplicatesCollapsed: number;
  /** Rows the table started with, copied from `copyFrom`. */
  rowsCopied: number;
  /** Copied rows replaced by a written row of the same primary key. */
  rowsReplaced: number;
  /** Copied rows deleted because a written key named them (keysToDelete); 0 otherwise. */
  rowsDeleted: number;
}

/** How a staging table starts. */
export interface StagingOptions {
  /** A committed table of the same schema whose rows the new table starts with (append and
   * upsert build on the dataset's records): they keep their order, and written rows are numbered
   * after them, so a written row replaces a copied row of the same key and follows them without one. */
  copyFrom?: string;
  /** With `copyFrom`, where each column of the new table (aligned with `schema.columns`) takes its
   * values from in the copied table, when its columns are not the same (a schema change): rows
   * keep their numbers, so the copy keeps their order. Copied in SQL, no row through the process. */
  copyColumns?: CopiedColumn[];
  /** What `write` takes: rows of the table (`records`, the default), or primary-key values
   * (`keysToDelete`: rows aligned with `schema.primaryKey`, which must not be empty). Keys are
   * numbered after the copied rows like records; `finish` deletes the copied rows they name, then
   * the keys themselves, so the table ends holding the copied rows no key named (a delete by key). */
  writes?: 'records' | 'keysToDelete';
}

/** Where a column of a table copied under a changed schema takes its values from. */
export type CopiedColumn =
  /** A column of the copied table, converted to the new column's kind when that differs (its
   * values must fit: an int64 beyond 2^53 loses digits as a float64, see `countBeyond`). */
  | { from: 'column'; column: string }
  /** A text column of the copied table with `suffix` appended (null stays null). */
  | { from: 'columnWithSuffix'; column: string; suffix: string }
  /** The same value in every row (null, or a default). */
  | { from: 'value'; value: CellValue };

/** The columns `write` takes, after the hidden row number: every column, or the key's. */
export function writtenColumns(schema: TableSchema, options: StagingOptions): string[] {
  if (options.writes !== 'keysToDelete') return schema.columns.map((c) => c.name);
  if (schema.primaryKey.length === 0) throw new Error('keysToDelete needs a table with a primary key');
  return schema.primaryKey;
}

/** Writes one new records table; rows are aligned with the table's columns. */
export interface StagingWriter {
  readonly table: string;
  /** Appends rows in file order, aligned with the written columns (`writtenColumns`): the last
   * row of a primary key wins. */
  write(rows: CellValue[][]): Promise<void>;
  /** Flushes, removes duplicates of the primary key and builds the indexes. */
  finish(): Promise<StagingResult>;
  /** Drops the table and frees the connection; safe to call after finish or twice. */
  abort(): Promise<void>;
}

/** Creates, reads, lists and drops the record tables of datasets. */
export interface RecordStore {
  /** Starts a staging table named `table`, dropping a leftover of the same name (a re-run) first. */
  createStaging(
    table: string,
    schema: TableSchema,
    signal?: AbortSignal,
    options?: StagingOptions,
  ): Promise<StagingWriter>;
  /** The indexes of `rows` (aligned with the columns) whose primary key a committed table already
   * holds, ascending; one query per call through the table's key index. Empty without a key. */
  keysHeld(table: string, schema: TableSchema, rows: readonly CellValue[][]): Promise<number[]>;
  /** One keyset page of a committed table, in primary-key order (file order without a key). */
  readPage(table: string, schema: TableSchema, query: PageQuery): Promise<ReadRow[]>;
  /** Every row of a committed table in the order of its pages, a batch of rows at a time. */
  readAll(table: string, schema: TableSchema): AsyncGenerator<ReadValue[][]>;
  /** How many values of the int64 column `column` of a committed table lie beyond ±`bound`. */
  countBeyond(table: string, column: string, bound: bigint): Promise<number>;
  /**
   * Every row of a committed table as UTF-8 text, in the order of its pages, read from one snapshot
   * (a table dropped meanwhile is still read to its end), with backpressure. `csv`: RFC 4180 lines
   * ending in CRLF, no header; a field is quoted only when it holds `"`, `,`, CR or LF; null is an
   * empty field. `ndjson`: one JSON object a line, keyed by column name. In both, int64 values are
   * their decimal digits, float64 values JavaScript's shortest text of the number (`String(n)`),
   * booleans `true`/`false`. Destroying the stream stops the read and frees its connection.
   */
  streamText(table: string, schema: TableSchema, format: ExportFormat): Readable;
  dropTable(table: string): Promise<void>;
  /** Every records table of a dataset: current, retired and staging (not its change log). */
  listTables(datasetId: string): Promise<string[]>;
  /** Writes the keys a new table changes into the dataset's change log (made at the first
   * capture); returns how many. SQL only: no key passes through the process. */
  captureChanges(capture: ChangeCapture): Promise<number>;
  /** One page of a batch of a change log, joined to the current records (change-log.ts). */
  readChanges(query: ChangeRead): Promise<ChangeRow[]>;
  /** Deletes the keys of batches from a change log (pruned, or never committed). */
  discardChanges(changesTable: string, batches: number[]): Promise<void>;
}

/** Which keys of a finished table (`table`, its key built) are changes against `previous`, the
 * table it follows, to be written into `changesTable` under `batch`. */
export interface ChangeCapture {
  changesTable: string;
  batch: number;
  schema: TableSchema;
  table: string;
  /** The records the table follows (same schema); null: none, every considered row is a change. */
  previous: string | null;
  /** The rows of `table` considered: all, only those written after the copy of `previous` (append,
   * upsert: numbered after its last row), or none (a delete). A row is a change unless `previous`
   * holds the same key with the same values. */
  changed: 'all' | 'writtenAfterCopy' | 'none';
  /** Whether keys of `previous` missing from `table` are changes (deleted). */
  removed: boolean;
  /** About how many rows the larger of the two tables holds: SQLite scans large ones on a thread. */
  rows: number;
}

/** A page of one batch of a change log: its keys after `after`, that no batch of `later` changed. */
export interface ChangeRead {
  changesTable: string;
  batch: number;
  /** Where the batch's keys are: in the log under `batch`, or (a dataset's first load) every key
   * of the current records, as a first load changed every record there that no later batch did. */
  keysIn: 'log' | 'records';
  later: number[];
  /** The dataset's current records table and its schema (the key's columns are the log's). */
  current: string | null;
  schema: TableSchema;
  after: KeysetPosition | null;
  limit: number;
}

/** A changed key as read: its keyset position, the key and the current record (null: deleted) as
 * JSON objects, written as a JSON line of the table's text (streamText) writes them. */
export interface ChangeRow {
  position: KeysetPosition;
  key: string;
  record: string | null;
}

/** The change log of a dataset: `chg_<datasetId as hex>` (outside `tablePrefix`, so never taken
 * for a records table). */
export function changesTableName(datasetId: string): string {
  return `chg_${tablePrefix(datasetId).slice('rec_'.length, -1)}`;
}

/** The hidden column holding a record's position in its file. No property can be named so. */
export const ROW_COLUMN = '#row';

/** The columns a table is ordered by: its primary key, else the hidden row order. */
export function orderColumns(schema: TableSchema): string[] {
  return schema.primaryKey.length > 0 ? schema.primaryKey : [ROW_COLUMN];
}

/** Quotes an identifier for both dialects. */
export function quoteId(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** Prefix of every table of a dataset: `rec_<datasetId as hex>_`. */
export function tablePrefix(datasetId: string): string {
  const hex = datasetId.toLowerCase().replace(/[^0-9a-f]/g, '');
  if (hex.length === 0) throw new Error(`dataset id ${datasetId} has no hex digits`);
  return `rec_${hex.slice(0, 32)}_`;
}

/** The table one attempt of a job loads into: unique per attempt, so a worker that lost its lease
 * while stalled (not dead) never writes to or drops the table of the worker that took over. */
export function stagingTableName(datasetId: string, jobId: string, attempt = 1): string {
  const base = `${tablePrefix(datasetId)}${jobId.replace(/-/g, '').slice(0, 16)}`;
  return attempt > 1 ? `${base}_${attempt}` : base;
}
