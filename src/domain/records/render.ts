// Records as JSON objects (integers written as digits, so 64-bit values stay exact) and CSV lines.
import type { ReadValue } from '../../storage/records/record-store.js';
import { COLUMN_TYPES } from '../datasets/column-types.js';
import type { SchemaProperty } from '../datasets/schema.js';

/** One record as a JSON object text; integer values are emitted as JSON numbers, digit for digit. */
export function recordJson(properties: SchemaProperty[], values: ReadValue[]): string {
  let out = '{';
  properties.forEach((p, i) => {
    if (i > 0) out += ',';
    const v = values[i] ?? null;
    out += `${JSON.stringify(p.name)}:${v === null ? 'null' : COLUMN_TYPES[p.type].toJson(v)}`;
  });
  return `${out}}`;
}

/** The CSV header line (RFC 4180, CRLF). */
export function csvHeader(properties: SchemaProperty[]): string {
  return `${properties.map((p) => csvField(p.name)).join(',')}\r\n`;
}

/** One record as a CSV line; null is an empty field. */
export function recordCsv(values: ReadValue[]): string {
  return `${values.map((v) => (v === null ? '' : csvField(String(v)))).join(',')}\r\n`;
}

/** One CSV field (RFC 4180): quoted when it holds a quote, a comma or a line break. */
export function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
