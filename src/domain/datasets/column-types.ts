// The column types a dataset property may have, and everything each one means, in one table.
//
// Adding a type is one entry here: its storage kind (if none of the record store's kinds fits,
// add one to ValueKind in storage/records/record-store.ts and its row to KINDS in
// storage/records/kinds.ts), how it parses from CSV text and from JSON, why a value is refused,
// how it renders as JSON and how a filter value parses. The type's name comes from its key, so
// the entry is all there is to add; a missing field, or a table or switch elsewhere keyed by the
// types, fails the typecheck until the new type is handled.
import type { CellValue, CopiedColumn, ReadValue, ValueKind } from '../../storage/records/record-store.js';
import {
  booleanFromText,
  int64,
  INTEGER_TEXT,
  integerFromJson,
  integerFromText,
  numberFromText,
  type JsonConverter,
  type TextConverter,
} from '../loading/cells.js';
import { parseDate, parseDatetime } from '../loading/temporal.js';

/** What one column type means, from the file to the answer. */
export interface ColumnType {
  /** The one storage decision: how the record store keeps the values. */
  storage: ValueKind;
  /** Non-empty CSV/TSV text to a value; undefined when it is not of the type (the hot path). */
  fromText: TextConverter;
  /** A JSON value (never null) to a value; undefined when it is not of the type. */
  fromJson: JsonConverter;
  /** Why `fromText` refused a text. */
  badText: (text: string) => string;
  /** Why `fromJson` refused a value. */
  badJson: (value: unknown) => string;
  /** A value as read (never null) as JSON text. */
  toJson: (value: Exclude<ReadValue, null>) => string;
  /** A filter's query-parameter text to the value compared; undefined when it is not of the type. */
  fromFilter: (raw: string) => Exclude<CellValue, null> | undefined;
}

/** A text cell shown in a message: quoted, and cut at 40 characters. */
function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** The usual refusal of a text cell. */
function isNot(text: string, expected: string): string {
  return `${quote(text)} is not ${expected}`;
}

/** The usual refusal of a JSON value: what was expected and what came. */
function expectedGot(expected: string, value: unknown): string {
  const shown =
    typeof value === 'string'
      ? quote(value)
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : Array.isArray(value)
          ? 'an array'
          : `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}`;
  return `expected ${expected}, got ${shown}`;
}

/** JSON text of a value as read; a non-finite number (which JSON cannot hold) is null. */
function jsonText(value: Exclude<ReadValue, null>): string {
  return typeof value === 'number' && !Number.isFinite(value) ? 'null' : JSON.stringify(value);
}

const asIs = (text: string): string => text;
const outOfRange = (text: string): string => `${quote(text)} is outside the 64-bit integer range`;

const TABLE = {
  string: {
    storage: 'text',
    fromText: asIs,
    fromJson: (v) => (typeof v === 'string' ? v : undefined),
    badText: (t) => isNot(t, 'a string'),
    badJson: (v) => expectedGot('a string', v),
    toJson: jsonText,
    fromFilter: asIs,
  },
  integer: {
    storage: 'int64',
    fromText: integerFromText,
    fromJson: integerFromJson,
    badText: (t) => (INTEGER_TEXT.test(t) ? outOfRange(t) : isNot(t, 'an integer')),
    badJson: (v) => {
      if (typeof v === 'number' && Number.isInteger(v)) {
        return `${v} is beyond 2^53 and loses digits as a JSON number; send it as a string of digits`;
      }
      if (typeof v === 'string' && /^-?\d+$/.test(v)) return outOfRange(v);
      return expectedGot('an integer', v);
    },
    // Read as decimal text and written as it is: digit for digit, also beyond 2^53.
    toJson: (v) => (typeof v === 'string' && /^-?\d+$/.test(v) ? v : jsonText(v)),
    fromFilter: (raw) => (/^-?\d{1,19}$/.test(raw) ? int64(raw) : undefined),
  },
  boolean: {
    storage: 'boolean',
    fromText: booleanFromText,
    fromJson: (v) => (typeof v === 'boolean' ? v : undefined),
    badText: (t) => isNot(t, 'a boolean (true/false or 1/0)'),
    // In JSON a boolean is only true or false, never 1/0 as CSV may write it.
    badJson: (v) => expectedGot('true or false', v),
    toJson: jsonText,
    fromFilter: booleanFromText,
  },
  number: {
    storage: 'float64',
    fromText: numberFromText,
    fromJson: (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined),
    badText: (t) => isNot(t, 'a finite decimal number'),
    badJson: (v) => expectedGot('a finite decimal number', v),
    toJson: jsonText,
    fromFilter: (raw) => {
      const n = Number(raw);
      return raw.trim() !== '' && Number.isFinite(n) ? n : undefined;
    },
  },
  date: {
    // Normalised text (temporal.ts): both engines keep exactly the same thing.
    storage: 'text',
    fromText: parseDate,
    fromJson: (v) => (typeof v === 'string' ? parseDate(v) : undefined),
    badText: (t) =>
      /^\d{4}-\d{2}-\d{2}$/.test(t)
        ? `${quote(t)} is not a real calendar date`
        : isNot(t, 'a date (YYYY-MM-DD)'),
    badJson: (v) => expectedGot('a date (YYYY-MM-DD)', v),
    toJson: jsonText,
    fromFilter: asIs,
  },
  datetime: {
    storage: 'text',
    fromText: parseDatetime,
    fromJson: (v) => (typeof v === 'string' ? parseDatetime(v) : undefined),
    badText: (t) => isNot(t, 'an ISO 8601 date-time'),
    badJson: (v) => expectedGot('an ISO 8601 date-time', v),
    toJson: jsonText,
    fromFilter: asIs,
  },
} satisfies Record<string, ColumnType>;

/** The name of a column type; the public record's are string, integer and boolean, the rest ours. */
export type PropertyType = keyof typeof TABLE;

/** Every column type by name. */
export const COLUMN_TYPES: Readonly<Record<PropertyType, ColumnType>> = TABLE;

/** The type names in the table's order (the order error messages and the API document list them). */
export const PROPERTY_TYPES = Object.keys(COLUMN_TYPES) as readonly PropertyType[];

/** Why a text cell was refused. */
export function describeBadText(type: PropertyType, text: string): string {
  return COLUMN_TYPES[type].badText(text);
}

/** Why a JSON value was refused. */
export function describeBadJson(type: PropertyType, value: unknown): string {
  return COLUMN_TYPES[type].badJson(value);
}

/** How a property's values change type when a schema change widens it (schema-change.ts). */
export interface Widening {
  /** The copied column of the records table, from the old column. */
  copy: (column: string) => CopiedColumn;
  /** For an int64 source: values beyond ±bound do not fit the new type (they would lose digits). */
  beyond?: bigint;
}

/** 2^53: integers beyond it lose digits as a number (a 64-bit float). */
const EXACT_FLOAT = 2n ** 53n;

/**
 * The type changes a schema change accepts: each keeps every value (a date becomes midnight UTC
 * of its day, in the datetime's stored form). Any other change of type is refused (narrowing).
 */
export const WIDENINGS: Readonly<Partial<Record<PropertyType, Partial<Record<PropertyType, Widening>>>>> = {
  integer: { number: { copy: (column) => ({ from: 'column', column }), beyond: EXACT_FLOAT } },
  date: {
    datetime: { copy: (column) => ({ from: 'columnWithSuffix', column, suffix: 'T00:00:00.000000' }) },
  },
};

/** The widening from one type to another, if the change is one. */
export function wideningOf(from: PropertyType, to: PropertyType): Widening | undefined {
  return WIDENINGS[from]?.[to];
}
