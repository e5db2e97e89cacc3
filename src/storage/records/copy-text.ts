// Rows in PostgreSQL's COPY text format.
import type { CellValue } from './record-store.js';

/** `rows` as COPY text lines, each led by its row number (the hidden row-order column). */
export function formatCopyRows(rows: readonly CellValue[][], firstRowNumber: number): string {
  let text = '';
  let n = firstRowNumber;
  for (const row of rows) {
    text += String(n++);
    for (const v of row) text += `\t${copyText(v)}`;
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
