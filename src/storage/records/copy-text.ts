// Rows in PostgreSQL's COPY text format.
import type { CellValue } from './record-store.js';

/**
 * `rows[from..to)` as COPY text lines, each led by its row number (the hidden row-order column),
 * numbered from `firstRowNumber`.
 */
export function formatCopyRows(
  rows: readonly CellValue[][],
  firstRowNumber: number,
  from = 0,
  to = rows.length,
): string {
  let text = '';
  let n = firstRowNumber;
  for (let r = from; r < to; r++) {
    text += String(n++);
    for (const v of rows[r] as CellValue[]) text += `\t${copyText(v)}`;
    text += '\n';
  }
  return text;
}

/** A value in COPY's text format: \N for null, backslash escapes for the delimiters. */
export function copyText(v: CellValue): string {
  if (v === null) return '\\N';
  if (typeof v === 'boolean') return v ? 't' : 'f';
  if (typeof v !== 'string') return String(v);
  return /[\\\t\n\r]/.test(v)
    ? v.replace(/\\/g, '\\\\').replace(/\t/g, '\\t').replace(/\n/g, '\\n').replace(/\r/g, '\\r')
    : v;
}

/** The escapes COPY TO writes in its text format (a backslash before any other byte is that byte). */
const UNESCAPED: Record<string, string> = { b: '\b', f: '\f', n: '\n', r: '\r', t: '\t', v: '\v' };
const ESCAPE = /\\(.)/gs;

/** A field of COPY's text format as the text it holds (`\N`, null, is the caller's to tell apart). */
export function copyTextField(field: string): string {
  return field.includes('\\') ? field.replace(ESCAPE, (_, c: string) => UNESCAPED[c] ?? c) : field;
}
