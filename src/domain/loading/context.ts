// State shared by the format readers of one parse: the schema's shape, the errors, the counters,
// and the batch of valid rows being filled.
import type { DatasetSchema, PropertyType } from '../datasets/schema.js';
import type { CellValue } from './cells.js';
import type { ErrorCollector } from './errors.js';

/** Counters of one parse, updated while it runs. */
export interface ParseStats {
  /** Data records read so far, valid or not (the CSV header and blank lines are not records). */
  rowsRead: number;
}

/** Valid typed rows, each aligned with `schema.properties`, and the line where each one starts. */
export interface ParsedBatch {
  rows: CellValue[][];
  lines: number[];
}

/** A record longer than this (in UTF-16 units) stops the parse: most likely an unclosed quote. */
export const MAX_RECORD_CHARS = 8 * 1024 * 1024;

/** What a format reader needs: the schema's shape, where rows go and where errors go. */
export class LoadContext {
  readonly names: string[];
  readonly types: PropertyType[];
  readonly required: boolean[];
  private rows: CellValue[][] = [];
  private lines: number[] = [];

  constructor(
    schema: DatasetSchema,
    readonly errors: ErrorCollector,
    readonly stats: ParseStats,
    readonly batchSize: number,
  ) {
    this.names = schema.properties.map((p) => p.name);
    this.types = schema.properties.map((p) => p.type);
    // Primary-key values identify records, so they are required whatever the schema says.
    this.required = schema.properties.map((p) => p.required || schema.primaryKey.includes(p.name));
  }

  /** Records an error; `property` names the schema property (or the offending column or key). */
  error(line: number, message: string, property?: string): void {
    this.errors.add(property === undefined ? { line, message } : { line, property, message });
  }

  /** Adds a valid row to the current batch. */
  accept(row: CellValue[], line: number): void {
    this.rows.push(row);
    this.lines.push(line);
  }

  /** True when the current batch should be handed out. */
  get full(): boolean {
    return this.rows.length >= this.batchSize;
  }

  /** True when the current batch holds rows. */
  get pending(): boolean {
    return this.rows.length > 0;
  }

  /** Hands out the current batch and starts a new one. */
  take(): ParsedBatch {
    const batch = { rows: this.rows, lines: this.lines };
    this.rows = [];
    this.lines = [];
    return batch;
  }
}
