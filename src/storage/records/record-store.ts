// The record store seam: every load writes a new table (a generation) that is complete before it
// becomes visible, so readers see all old or all new records. SQLite and PostgreSQL implement the
// writer; their differences are capabilities (multi-row INSERT vs COPY), not class checks.
import type { DatasetSchema, PropertyType } from '../../domain/datasets/schema.js';

import type { CellValue } from '../../domain/loading/index.js';

/** One value of a record, as the parser yields it (integers beyond 2^53 as bigint). */
export type { CellValue };

/** What the engine can do; callers pick strategies by these, never by engine class. */
export interface RecordStoreCapabilities {
  /** Rows stream through COPY FROM STDIN (PostgreSQL) rather than multi-row INSERTs (SQLite). */
  copyFromStdin: boolean;
  /** Booleans are stored as 0/1 (SQLite) rather than a boolean type. */
  booleansAsIntegers: boolean;
}

/** Counts of a finished staging table. */
export interface StagingResult {
  rowsWritten: number;
  rowsLoaded: number;
  duplicatesCollapsed: number;
}

/** Writes one new records table; rows are aligned with schema.properties. */
export interface StagingWriter {
  readonly table: string;
  /** Appends rows in file order (the last row of a primary key wins). */
  write(rows: CellValue[][]): Promise<void>;
  /** Flushes, removes duplicates of the primary key and builds the indexes. */
  finish(): Promise<StagingResult>;
  /** Drops the table and frees the connection; safe to call after finish or twice. */
  abort(): Promise<void>;
}

/** Creates, lists and drops the record tables of datasets. */
export interface RecordStore {
  readonly capabilities: RecordStoreCapabilities;
  /** Starts a staging table named `table`, dropping a leftover of the same name (a re-run) first. */
  createStaging(table: string, schema: DatasetSchema, signal?: AbortSignal): Promise<StagingWriter>;
  dropTable(table: string): Promise<void>;
  /** Every records table of a dataset: current, retired and staging. */
  listTables(datasetId: string): Promise<string[]>;
}

/** The hidden column holding a record's position in its file. No property can be named so. */
export const ROW_COLUMN = '#row';

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

/** Column type of a property in each dialect. */
export function columnType(type: PropertyType, dialect: 'sqlite' | 'postgres'): string {
  switch (type) {
    case 'string':
    case 'date':
    case 'datetime':
      return 'text';
    case 'integer':
      return dialect === 'sqlite' ? 'integer' : 'bigint';
    case 'boolean':
      return dialect === 'sqlite' ? 'integer' : 'boolean';
    case 'number':
      return dialect === 'sqlite' ? 'real' : 'double precision';
  }
}
