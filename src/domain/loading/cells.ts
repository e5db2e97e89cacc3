// Conversion of one cell to its typed value: from CSV text, or checking a JSON value's type.
// The hot paths return undefined for a bad value; the error path then calls describe* to say why.
import type { PropertyType } from '../datasets/schema.js';
import { parseDate, parseDatetime } from './temporal.js';

/** A typed cell: integers beyond 2^53 are bigint; date and datetime are normalised text. */
export type CellValue = string | number | bigint | boolean | null;

/** Turns non-empty text into a typed value, or undefined when the text is not of the type. */
export type TextConverter = (text: string) => CellValue | undefined;
/** Checks a JSON value (never null or undefined) against the type, or undefined when it is not. */
export type JsonConverter = (value: unknown) => CellValue | undefined;

const INTEGER_TEXT = /^[-+]?\d+$/;
const DECIMAL_TEXT = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** A 64-bit integer from digit text: a number when exactly representable, else a bigint. */
function int64(text: string): number | bigint | undefined {
  const v = BigInt(text);
  if (v < INT64_MIN || v > INT64_MAX) return undefined;
  return v >= SAFE_MIN && v <= SAFE_MAX ? Number(v) : v;
}

/** An integer from `[+-]digits` text, read by hand: the commonest cell type, so worth it. */
const integerFromText: TextConverter = (t) => {
  const length = t.length;
  const c = t.charCodeAt(0);
  const signed = c === 0x2d || c === 0x2b; // '-' or '+'
  // At most 15 digits always fit in a double exactly; longer text goes through BigInt.
  if (length > 15) return INTEGER_TEXT.test(t) ? int64(t) : undefined;
  let n = 0;
  for (let i = signed ? 1 : 0; i < length; i++) {
    const d = t.charCodeAt(i) - 0x30;
    if (d < 0 || d > 9) return undefined;
    n = n * 10 + d;
  }
  if (signed && length === 1) return undefined;
  return c === 0x2d && n !== 0 ? -n : n;
};

const booleanFromText: TextConverter = (t) => {
  switch (t) {
    case 'true':
    case '1':
      return true;
    case 'false':
    case '0':
      return false;
  }
  const lower = t.toLowerCase();
  return lower === 'true' ? true : lower === 'false' ? false : undefined;
};

// Exact powers of ten: an integer below 2^53 divided by one of them is correctly rounded, so the
// fast path below gives exactly what Number() gives (Clinger's fast path).
const POWERS_OF_TEN = Array.from({ length: 23 }, (_, k) => 10 ** k);

const numberFromText: TextConverter = (t) => {
  const length = t.length;
  const c = t.charCodeAt(0);
  const signed = c === 0x2d || c === 0x2b;
  let mantissa = 0;
  let digitCount = 0;
  let point = -1;
  let i = signed ? 1 : 0;
  for (; i < length; i++) {
    const d = t.charCodeAt(i) - 0x30;
    if (d >= 0 && d <= 9) {
      mantissa = mantissa * 10 + d;
      digitCount++;
    } else if (d === -2 && point < 0)
      point = i; // '.'
    else break;
  }
  if (i === length && digitCount > 0 && digitCount <= 15) {
    const scaled = point < 0 ? mantissa : mantissa / (POWERS_OF_TEN[length - point - 1] ?? 1);
    return c === 0x2d && scaled !== 0 ? -scaled : scaled;
  }
  // Exponents and long mantissas: Number() after a strict check (it also takes hex, Infinity, …).
  if (!DECIMAL_TEXT.test(t)) return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
};

/** The text converter for each property type. */
export const TEXT_CONVERTERS: Record<PropertyType, TextConverter> = {
  string: (t) => t,
  integer: integerFromText,
  boolean: booleanFromText,
  number: numberFromText,
  date: parseDate,
  datetime: parseDatetime,
};

/** The JSON converter for each property type; 64-bit integers may also come as digit strings. */
export const JSON_CONVERTERS: Record<PropertyType, JsonConverter> = {
  string: (v) => (typeof v === 'string' ? v : undefined),
  integer: (v) => {
    // A JSON number beyond 2^53 has already lost digits in JSON.parse, so it is refused.
    if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
    return typeof v === 'string' && /^-?\d+$/.test(v) ? int64(v) : undefined;
  },
  boolean: (v) => (typeof v === 'boolean' ? v : undefined),
  number: (v) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined),
  date: (v) => (typeof v === 'string' ? parseDate(v) : undefined),
  datetime: (v) => (typeof v === 'string' ? parseDatetime(v) : undefined),
};

const EXPECTED: Record<PropertyType, string> = {
  string: 'a string',
  integer: 'an integer',
  boolean: 'a boolean (true/false or 1/0)',
  number: 'a finite decimal number',
  date: 'a date (YYYY-MM-DD)',
  datetime: 'an ISO 8601 date-time',
};

function quote(text: string): string {
  return JSON.stringify(text.length > 40 ? `${text.slice(0, 40)}…` : text);
}

/** Why a text cell was refused. */
export function describeBadText(type: PropertyType, text: string): string {
  if (type === 'integer' && INTEGER_TEXT.test(text))
    return `${quote(text)} is outside the 64-bit integer range`;
  if (type === 'date' && /^\d{4}-\d{2}-\d{2}$/.test(text))
    return `${quote(text)} is not a real calendar date`;
  return `${quote(text)} is not ${EXPECTED[type]}`;
}

/** Why a JSON value was refused. */
export function describeBadJson(type: PropertyType, value: unknown): string {
  if (type === 'integer' && typeof value === 'number' && Number.isInteger(value)) {
    return `${value} is beyond 2^53 and loses digits as a JSON number; send it as a string of digits`;
  }
  if (type === 'integer' && typeof value === 'string' && /^-?\d+$/.test(value)) {
    return `${quote(value)} is outside the 64-bit integer range`;
  }
  const shown =
    typeof value === 'string'
      ? quote(value)
      : typeof value === 'number' || typeof value === 'boolean'
        ? String(value)
        : Array.isArray(value)
          ? 'an array'
          : `${typeof value === 'object' ? 'an' : 'a'} ${typeof value}`;
  // In JSON a boolean is only true or false, never 1/0 as CSV may write it.
  return `expected ${type === 'boolean' ? 'true or false' : EXPECTED[type]}, got ${shown}`;
}
