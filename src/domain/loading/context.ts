// State shared by the format readers of one parse: the schema's shape, the errors, the counters,
// and the batch of valid rows being filled.
import type { DatasetSchema, PropertyType } from '../datasets/schema.js';
import type { CellValue } from './cells.js';
import { ERROR_BACKLOG_LIMIT, type ErrorCollector } from './errors.js';

/** What a file's records hold: every property of the schema (`properties`), or the values of its
 * primary key alone (`primaryKey`: the keys of the records a mode=delete load removes). */
export type RecordFields = 'properties' | 'primaryKey';

/** Counters of one parse, updated while it runs. */
export interface ParseStats {
  /** Data records read so far, valid or not (the CSV header and blank lines are not records). */
  rowsRead: number;
}

/** Valid typed rows, each aligned with the fields read (`schema.properties`, or for `primaryKey`
 * the key's properties in `schema.primaryKey` order), and the line where each one starts. */
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
  /** Why a column or key the records may not hold is refused: the end of its error message. */
  readonly notAField: string;
  /**
   * The text of the record being read, as the parser saw it; asked only when the record has a
   * defect (for the rejected-rows file). Each reader sets it once per chunk, not per record.
   */
  recordText: () => string = () => '';
  private rows: CellValue[][] = [];
  private lines: number[] = [];
  private textOf = { record: 0, text: '' };

  constructor(
    schema: DatasetSchema,
    readonly errors: ErrorCollector,
    readonly stats: ParseStats,
    readonly batchSize: number,
    fields: RecordFields = 'properties',
  ) {
    const properties = fields === 'primaryKey' ? keyProperties(schema) : schema.properties;
    this.names = properties.map((p) => p.name);
    this.types = properties.map((p) => p.type);
    // Primary-key values identify records, so they are required whatever the schema says.
    this.required = properties.map((p) => p.required || schema.primaryKey.includes(p.name));
    this.notAField =
      fields === 'primaryKey'
        ? `is not part of the primary key (${schema.primaryKey.join(', ')}); a mode=delete file holds the key's values only`
        : 'is not a property of the dataset';
  }

  /** Records a defect of the record being read (the `rowsRead`-th); `property` names the schema
   * property (or the offending key). The record is left out, the rest of the file still loads. */
  error(line: number, message: string, property?: string): void {
    const record = this.stats.rowsRead;
    if (this.textOf.record !== record) this.textOf = { record, text: this.recordText() };
    this.errors.add(loadError(line, message, property), this.textOf.text, record);
  }

  /** Records a defect of the file as a whole (its header, its structure): nothing can load. */
  fileError(line: number, message: string, property?: string): void {
    this.errors.addFileError(loadError(line, message, property));
  }

  /** Adds a valid row to the current batch. */
  accept(row: CellValue[], line: number): void {
    this.rows.push(row);
    this.lines.push(line);
  }

  /** True when the current batch should be handed out: it is full, or many defects wait to be
   * stored (then the batch may be small, even empty). */
  get full(): boolean {
    return this.rows.length >= this.batchSize || this.errors.backlog >= ERROR_BACKLOG_LIMIT;
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

/** The key's properties, in key order. */
function keyProperties(schema: DatasetSchema): DatasetSchema['properties'] {
  return schema.primaryKey.map((name) => {
    const property = schema.properties.find((p) => p.name === name);
    if (property === undefined) throw new Error(`primary key "${name}" is not a property of the schema`);
    return property;
  });
}

function loadError(line: number, message: string, property: string | undefined) {
  return property === undefined ? { line, message } : { line, property, message };
}
