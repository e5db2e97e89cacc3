// A whole SQLite records table as text (the rendering streamText promises), in key order, on a
// connection of its own: one read transaction holds the table's snapshot from the first row to the
// last, so a sweep dropping the table meanwhile does not cut the download short. Rows are rendered
// in pieces of about 64 KB (strings under V8's large-object threshold die young), each handed on
// only when the reader wants more, so memory stays flat whatever the table's size.
//
// A table whose rows lie in key order is read along the key's index on the calling thread,
// between pieces giving the event loop a turn (better-sqlite3 reads synchronously: a reader as fast
// as the rendering would otherwise hold every other request until the last row). A table whose
// rows lie in any other order is read whole and sorted (keyOrderRead says why), on a thread of its
// own (text-sqlite-thread.ts): the sort comes before the first row and takes about a second per
// million records. Its pieces come over as bytes, transferred rather than copied.
import { Readable } from 'node:stream';
import { setImmediate as eventLoopTurn } from 'node:timers/promises';
import type BetterSqlite3 from 'better-sqlite3';
import { startThread } from '../../lib/threads.js';
import { openSqliteConnection } from '../db/database.js';
import { errorFromThread, type ThreadError } from './sqlite-thread.js';
import type { ExportFormat } from '../db/tables.js';
import {
  orderColumns,
  quoteId,
  ROW_COLUMN,
  type ReadValue,
  type TableSchema,
  type ValueKind,
} from './record-store.js';
import { csvText, jsonObjectRenderer, jsonString } from './text-render.js';

const PIECE_CHARS = 64 * 1024;
/** Pieces the thread renders ahead of the reader. */
const THREAD_AHEAD = 2;

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

/** What is rendered: a table of a file, in a format. */
export interface TextWork {
  file: string;
  table: string;
  schema: TableSchema;
  format: ExportFormat;
}

/** How a table is read in key order: along the key's index, or whole and sorted. */
export type KeyOrderRead = 'index' | 'sort';

/**
 * Between a stream and its thread, in shared memory: [CREDITS] pieces the reader has asked for and
 * the thread has not sent yet; [STOP] set when the reader is gone. The thread waits on CREDITS.
 */
export const CREDITS = 0;
export const STOP = 1;

/** What the thread posts: a piece, the end, or the error it met. */
export type TextMessage = { piece: Uint8Array } | { end: true } | { error: ThreadError };

/** Streams a table's text; the connection (or the thread) ends when the stream ends or is destroyed. */
export function sqliteText(file: string, table: string, schema: TableSchema, format: ExportFormat): Readable {
  return Readable.from(pieces({ file, table, schema, format }), { objectMode: false });
}

async function* pieces(work: TextWork): AsyncGenerator<Buffer> {
  const conn = openSqliteConnection(work.file, 'pass');
  let read: KeyOrderRead;
  try {
    conn.exec('begin');
    read = keyOrderRead(conn, work.table, work.schema);
    if (read === 'index') {
      for (const piece of renderedPieces(conn, work, read)) {
        yield Buffer.from(piece);
        await eventLoopTurn();
      }
    }
    conn.exec('commit');
  } finally {
    conn.close();
  }
  if (read === 'sort') yield* piecesFromThread(work);
}

/** The pieces a thread renders of a table read whole and sorted, each asked for as the reader takes one. */
async function* piecesFromThread(work: TextWork): AsyncGenerator<Buffer> {
  const control = new Int32Array(new SharedArrayBuffer(2 * Int32Array.BYTES_PER_ELEMENT));
  const worker = startThread(new URL('./text-sqlite-thread.js', import.meta.url), { work, control });
  const arrived: TextMessage[] = [];
  let failure: Error | null = null;
  let wake = () => {};
  worker.on('message', (message: TextMessage) => {
    arrived.push(message);
    wake();
  });
  worker.once('error', (err) => {
    failure = err;
    wake();
  });
  worker.once('exit', (code) => {
    failure ??= new Error(`the SQLite text thread exited (code ${code}) before the end of the text`);
    wake();
  });
  const signal = (slot: number, add: number) => {
    Atomics.add(control, slot, add);
    Atomics.notify(control, CREDITS);
  };
  try {
    signal(CREDITS, THREAD_AHEAD);
    for (;;) {
      while (arrived.length === 0 && failure === null) await new Promise<void>((resolve) => (wake = resolve));
      const message = arrived.shift();
      if (message === undefined) throw failure ?? new Error('the SQLite text thread stopped');
      if ('end' in message) return;
      if ('error' in message) throw errorFromThread(message.error);
      signal(CREDITS, 1);
      yield Buffer.from(message.piece.buffer, message.piece.byteOffset, message.piece.byteLength);
    }
  } finally {
    signal(STOP, 1);
  }
}

/** The table's text in pieces of about PIECE_CHARS, read in key order as `read` says, in the caller's transaction. */
export function* renderedPieces(
  conn: BetterSqlite3.Database,
  work: TextWork,
  read: KeyOrderRead,
): Generator<string> {
  const { table, schema, format } = work;
  const columns = schema.columns.map((c) =>
    // 64-bit integers as text: as numbers they would lose digits beyond 2^53.
    c.kind === 'int64' ? `cast(${quoteId(c.name)} as text)` : quoteId(c.name),
  );
  const from = read === 'sort' ? `${quoteId(table)} not indexed` : quoteId(table);
  const stmt = conn
    .prepare(
      `select ${columns.length > 0 ? columns.join(', ') : 'null'} from ${from}
        order by ${orderColumns(schema).map(quoteId).join(', ')}`,
    )
    .raw();
  const renderLine = lineRenderer(schema, format);
  let piece = '';
  for (const row of stmt.iterate() as IterableIterator<ReadValue[]>) {
    piece += renderLine(row);
    if (piece.length >= PIECE_CHARS) {
      yield piece;
      piece = '';
    }
  }
  if (piece !== '') yield piece;
}

/** Places in the table where keyOrderRead looks, and key entries it follows from each. */
const SAMPLES = 16;
const SAMPLE_RUN = 32;
/** Rows whose next in key order lies at most so many rows further in the table are near it (a page holds ~40). */
const NEAR_ROWS = 64;
/** Near pairs, of those sampled, from which the index is followed rather than the table sorted. */
const INDEX_FROM = 0.85;

/**
 * How to read a table in key order. Its rows lie in the order they were loaded. Following the
 * key's index reads the row of each entry: in order when the file came in key order, a page read
 * from anywhere per row when it came in any other order (1M records: 0.8 s against 5.2 s, as slow
 * for `sqlite3`'s own export). Read whole and sorted by SQLite's sorter, either takes 1.1–1.4 s. A
 * few runs of the index, from rows spread over the table, tell which: whether each entry's row lies
 * just after the previous entry's.
 */
export function keyOrderRead(conn: BetterSqlite3.Database, table: string, schema: TableSchema): KeyOrderRead {
  const key = schema.primaryKey;
  if (key.length === 0) return 'index'; // read in row order: the table's own
  const t = quoteId(table);
  const row = quoteId(ROW_COLUMN);
  const keyList = key.map(quoteId).join(', ');
  const last = conn.prepare(`select max(${row}) from ${t}`).pluck().get() as number | null;
  if (last === null) return 'index';
  const keyAt = conn.prepare(`select ${keyList} from ${t} where ${row} >= ? order by ${row} limit 1`).raw();
  const params = key.map(() => '?').join(', ');
  const rowsAfter = conn
    .prepare(
      `select ${row} from ${t} where (${keyList}) >= (${params}) order by ${keyList} limit ${SAMPLE_RUN}`,
    )
    .pluck();
  let pairs = 0;
  let near = 0;
  for (let i = 0; i < SAMPLES; i++) {
    const at = keyAt.get(1 + Math.floor((i * last) / SAMPLES)) as unknown[] | undefined;
    if (at === undefined) continue;
    const rows = rowsAfter.all(...at) as number[];
    for (let j = 1; j < rows.length; j++) {
      const gap = (rows[j] as number) - (rows[j - 1] as number);
      pairs++;
      if (gap > 0 && gap <= NEAR_ROWS) near++;
    }
  }
  return pairs === 0 || near / pairs >= INDEX_FROM ? 'index' : 'sort';
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
