// The pieces of a table's text (streamText) that both engines' renderers share: CSV fields as
// RFC 4180 quotes them, JSON strings and property names as JSON.stringify writes them.
import type { TableSchema } from './record-store.js';

const NEEDS_QUOTES = /[",\r\n]/;
/** Characters JSON.stringify escapes in a string (besides lone surrogates, which UTF-8 text cannot hold). */
// eslint-disable-next-line no-control-regex -- JSON escapes the control characters
const JSON_ESCAPED = /["\\\x00-\x1f]/;

/** A CSV field: quoted when it holds a quote, a comma or a line break, quotes doubled. */
export const csvText = (s: string): string => (NEEDS_QUOTES.test(s) ? `"${s.replace(/"/g, '""')}"` : s);

/** JSON.stringify(s), without its call for the plain strings most values are. */
export const jsonString = (s: string): string => (JSON_ESCAPED.test(s) ? JSON.stringify(s) : `"${s}"`);

/** What goes before each value of a JSON line: `{"name":` before the first, `,"name":` before each other. */
export function jsonKeys(schema: TableSchema): string[] {
  return schema.columns.map((c, i) => `${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`);
}

/**
 * Renders a row's values (from index `from` on) as the JSON object of `schema`'s columns (as a
 * JSON line holds it, without the line feed), each non-null value by its column's renderer.
 * `kept`: the texts outlive their rows (the feed holds a page of them while it reads), so each is
 * one flat string joined from its pieces; text built by `+=` is a tree of a node per piece, which
 * every collection of the young generation copies node by node while it lives (a page of 10,000
 * changes spent a third of its CPU collecting). An export writes each text at once: `+=` is faster there.
 */
export function jsonObjectRenderer<V>(
  schema: TableSchema,
  render: readonly ((v: V) => string)[],
  texts: 'kept' | 'written' = 'written',
): (values: readonly (V | null)[], from?: number) => string {
  const keys = jsonKeys(schema);
  const n = keys.length;
  if (n === 0) return () => '{}';
  if (texts === 'kept') {
    const pieces = new Array<string>(2 * n + 1).fill('}');
    for (let i = 0; i < n; i++) pieces[2 * i] = keys[i] as string;
    return (values, from = 0) => {
      for (let i = 0; i < n; i++) {
        const v = values[from + i] ?? null;
        pieces[2 * i + 1] = v === null ? 'null' : (render[i] as (v: V) => string)(v);
      }
      return pieces.join('');
    };
  }
  return (values, from = 0) => {
    let out = '';
    for (let i = 0; i < n; i++) {
      const v = values[from + i] ?? null;
      out += keys[i] as string;
      out += v === null ? 'null' : (render[i] as (v: V) => string)(v);
    }
    return `${out}}`;
  };
}
