// The hand-written converters of cell text to typed values, and the 64-bit integer rule they
// share; the column-type table (datasets/column-types.ts) says which type uses which. The hot
// paths return undefined for a bad value; the error path then says why (describeBad*).
import { INT64_MAX, INT64_MIN, type CellValue } from '../../storage/records/record-store.js';

/** A typed cell: integers beyond 2^53 are bigint; date and datetime are normalised text. */
export type { CellValue };

/** Turns non-empty text into a typed value, or undefined when the text is not of the type. */
export type TextConverter = (text: string) => Exclude<CellValue, null> | undefined;
/** Checks a JSON value (never null or undefined) against the type, or undefined when it is not. */
export type JsonConverter = (value: unknown) => Exclude<CellValue, null> | undefined;

/** `[+-]digits`: text that is an integer, whether or not it fits in 64 bits. */
export const INTEGER_TEXT = /^[-+]?\d+$/;
const DECIMAL_TEXT = /^[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?$/;
const SAFE_MIN = BigInt(Number.MIN_SAFE_INTEGER);
const SAFE_MAX = BigInt(Number.MAX_SAFE_INTEGER);

/** A 64-bit integer from digit text: a number when exactly representable, else a bigint. */
export function int64(text: string): number | bigint | undefined {
  const v = BigInt(text);
  if (v < INT64_MIN || v > INT64_MAX) return undefined;
  return v >= SAFE_MIN && v <= SAFE_MAX ? Number(v) : v;
}

/** An integer from `[+-]digits` text, read by hand: the commonest cell type, so worth it. */
export const integerFromText: TextConverter = (t) => {
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

export const booleanFromText: TextConverter = (t) => {
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

export const numberFromText: TextConverter = (t) => {
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

/** An integer in JSON: a safe number, or digits in a string for values beyond 2^53. */
export const integerFromJson: JsonConverter = (v) => {
  // A JSON number beyond 2^53 has already lost digits in JSON.parse, so it is refused.
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v : undefined;
  return typeof v === 'string' && /^-?\d+$/.test(v) ? int64(v) : undefined;
};
