// The header row of a CSV or TSV file: which column holds which property.
import { COLUMN_TYPES } from '../datasets/column-types.js';
import type { TextConverter } from './cells.js';
import type { LoadContext } from './context.js';

/** Where each property sits in a record, and whether the header allows rows to be loaded. */
export interface ColumnLayout {
  /** For each schema property, its column index; -1 when the header lacks it. */
  columns: number[];
  /** For each schema property, the converter of its type. */
  converters: TextConverter[];
  /** True when the columns are exactly the properties in schema order: rows convert in place. */
  inPlace: boolean;
  /** Number of fields every record must have. */
  width: number;
  /** False when the header had an error: rows are then still checked but never handed out. */
  ok: boolean;
}

/** Maps header names (trimmed, matched exactly) to properties; header defects are errors on line 1. */
export function columnLayout(header: string[], ctx: LoadContext): ColumnLayout {
  const errorsBefore = ctx.errors.fileErrors;
  const seen = new Map<string, number>();
  header.forEach((raw, i) => {
    const name = raw.trim();
    if (seen.has(name)) ctx.fileError(1, `column "${name}" appears more than once in the header`, name);
    else seen.set(name, i);
    if (!ctx.names.includes(name)) ctx.fileError(1, `column "${name}" ${ctx.notAField}`, name);
  });
  const columns = ctx.names.map((name) => {
    const column = seen.get(name);
    if (column === undefined) ctx.fileError(1, `the header has no column for property "${name}"`, name);
    return column ?? -1;
  });
  const converters = ctx.types.map((type) => COLUMN_TYPES[type].fromText);
  const inPlace = header.length === columns.length && columns.every((column, p) => column === p);
  return { columns, converters, inPlace, width: header.length, ok: ctx.errors.fileErrors === errorsBefore };
}

/** The delimiter for `auto`: a tab when the header line has tabs and no commas, else a comma. */
export function guessDelimiter(headerLine: string): ',' | '\t' {
  return headerLine.includes('\t') && !headerLine.includes(',') ? '\t' : ',';
}
