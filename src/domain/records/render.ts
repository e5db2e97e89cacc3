// Records as JSON objects (integers written as digits, so 64-bit values stay exact) and CSV lines.
import type { SchemaProperty } from '../datasets/schema.js';
import type { ReadValue } from '../../storage/records/read.js';

/** One record as a JSON object text; integer values are emitted as JSON numbers, digit for digit. */
export function recordJson(properties: SchemaProperty[], values: ReadValue[]): string {
  let out = '{';
  properties.forEach((p, i) => {
    if (i > 0) out += ',';
    out += `${JSON.stringify(p.name)}:${jsonValue(p, values[i] ?? null)}`;
  });
  return `${out}}`;
}

function jsonValue(p: SchemaProperty, v: ReadValue): string {
  if (v === null) return 'null';
  if (p.type === 'integer' && typeof v === 'string' && /^-?\d+$/.test(v)) return v;
  if (typeof v === 'number' && !Number.isFinite(v)) return 'null';
  return JSON.stringify(v);
}

/** The CSV header line (RFC 4180, CRLF). */
export function csvHeader(properties: SchemaProperty[]): string {
  return `${properties.map((p) => csvField(p.name)).join(',')}\r\n`;
}

/** One record as a CSV line; null is an empty field. */
export function recordCsv(values: ReadValue[]): string {
  return `${values.map((v) => (v === null ? '' : csvField(String(v)))).join(',')}\r\n`;
}

function csvField(s: string): string {
  return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}
