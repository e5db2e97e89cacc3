// A whole SQLite records table as text (the rendering streamText promises), on a connection of its
// own: one read transaction holds the table's snapshot from the first row to the last, so a sweep
// dropping the table meanwhile does not cut the download short. Rows are rendered in pieces of
// about 64 KB (strings under V8's large-object threshold die young); each piece is handed on only
// when the reader wants more, so memory stays flat whatever the table's size. better-sqlite3 reads
// on the calling thread: between pieces the event loop gets a turn, or a reader as fast as the
// rendering (a socket that takes every write at once) would hold every other request until the
// last row.
import { Readable } from 'node:stream';
import { setImmediate as eventLoopTurn } from 'node:timers/promises';
import { openSqliteConnection } from '../db/database.js';
import type { ExportFormat } from '../db/tables.js';
import { orderColumns, quoteId, type ReadValue, type TableSchema, type ValueKind } from './record-store.js';
import { csvText, jsonObjectRenderer, jsonString } from './text-render.js';

const PIECE_CHARS = 64 * 1024;

/** SQLite booleans are 0/1 (kinds.ts). */
const booleanText = (v: ReadValue) => (v === 1 || v === '1' ? 'true' : 'false');
/** String(n), and null for what JSON cannot hold (never stored: loads refuse non-finite numbers). */
const numberJson = (v: ReadValue) => (Number.isFinite(v) ? String(v) : 'null');

/** A non-null value of each kind as SQLite gives it (int64 selected as text), in JSON. */
export const SQLITE_JSON: Record<ValueKind, (v: ReadValue) => string> = {
  text: (v) => jsonString(v as string),
  int64: String,
  float64: numberJson,
  boolean: booleanText,
};

/** A non-null value of each kind, as read (int64 selected as text), in each format. */
const RENDER: Record<ExportFormat, Record<ValueKind, (v: ReadValue) => string>> = {
  csv: { text: (v) => csvText(v as string), int64: String, float64: String, boolean: booleanText },
  ndjson: SQLITE_JSON,
};

/** Streams a table's text; the connection closes when the stream ends or is destroyed. */
export function sqliteText(file: string, table: string, schema: TableSchema, format: ExportFormat): Readable {
  return Readable.from(pieces(file, table, schema, format), { objectMode: false });
}

async function* pieces(
  file: string,
  table: string,
  schema: TableSchema,
  format: ExportFormat,
): AsyncGenerator<Buffer> {
  const conn = openSqliteConnection(file, 'pass');
  try {
    conn.exec('begin');
    const columns = schema.columns.map((c) =>
      // 64-bit integers as text: as numbers they would lose digits beyond 2^53.
      c.kind === 'int64' ? `cast(${quoteId(c.name)} as text)` : quoteId(c.name),
    );
    const stmt = conn
      .prepare(
        `select ${columns.length > 0 ? columns.join(', ') : 'null'} from ${quoteId(table)}
          order by ${orderColumns(schema).map(quoteId).join(', ')}`,
      )
      .raw();
    const renderLine = lineRenderer(schema, format);
    let piece = '';
    for (const row of stmt.iterate() as IterableIterator<ReadValue[]>) {
      piece += renderLine(row);
      if (piece.length >= PIECE_CHARS) {
        yield Buffer.from(piece);
        piece = '';
        await eventLoopTurn();
      }
    }
    if (piece !== '') yield Buffer.from(piece);
    conn.exec('commit');
  } finally {
    conn.close();
  }
}

/** One row as a line of the format. */
function lineRenderer(schema: TableSchema, format: ExportFormat): (row: ReadValue[]) => string {
  const render = schema.columns.map((c) => RENDER[format][c.kind]);
  const n = render.length;
  if (format === 'csv') {
    // Text is the common case: a direct call V8 can inline, other kinds through their renderer.
    const isText = schema.columns.map((c) => c.kind === 'text');
    return (row) => {
      let line = '';
      for (let i = 0; i < n; i++) {
        const v = row[i] ?? null;
        if (i > 0) line += ',';
        if (v === null) continue;
        line += isText[i] === true ? csvText(v as string) : (render[i] as (v: ReadValue) => string)(v);
      }
      return `${line}\r\n`;
    };
  }
  const object = jsonObjectRenderer(schema, render);
  return (row) => `${object(row)}\n`;
}
