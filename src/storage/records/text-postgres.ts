// A whole PostgreSQL records table as text (the rendering streamText promises), by `COPY (SELECT …)
// TO STDOUT` in COPY's own text format: the server reads the plain columns and prints them (one
// process apart, on another core), and each line is rendered here, as CSV or as a JSON line. Shaping
// the values in SQL instead (quoting, the JSON object, JavaScript's float notation) cost the server
// more than the whole COPY, and the server is what the export waits on.
// - float64: PostgreSQL's shortest round-trip digits (extra_float_digits = 1) are JavaScript's; only
//   the notation differs outside [1e-4, 1e15) (PostgreSQL `1e-05`, `1.5e+16`; JavaScript `0.00001`,
//   `15000000000000000`), and such values, recognised by their `e`, go through String(Number(text)).
// - int64 is printed digit for digit; booleans `t`/`f` become true/false; `\N` is null.
import { Readable } from 'node:stream';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ExportFormat } from '../db/tables.js';
import { copyTextField } from './copy-text.js';
import { orderColumns, quoteId, type TableSchema, type ValueKind } from './record-store.js';
import { csvText, jsonKeys, jsonString } from './text-render.js';

/** COPY's text for null. */
const NULL = '\\N';

/** A float8's text as JavaScript's String(n) writes it (-0 is 0 there). */
const jsNumber = (f: string): string => (f.includes('e') || f === '-0' ? String(Number(f)) : f);

const booleanJson = (f: string): string => (f === 't' ? 'true' : 'false');

/** A non-null value of each kind as PostgreSQL prints it (its text output, not COPY-escaped), in JSON. */
export const POSTGRES_JSON: Record<ValueKind, (text: string) => string> = {
  text: jsonString,
  int64: (f) => f,
  float64: jsNumber,
  boolean: booleanJson,
};

/** A non-null COPY text field of each kind, in each format. */
const RENDER: Record<ExportFormat, Record<ValueKind, (field: string) => string>> = {
  csv: {
    text: (f) => csvText(copyTextField(f)),
    int64: (f) => f,
    float64: jsNumber,
    boolean: booleanJson,
  },
  ndjson: { ...POSTGRES_JSON, text: (f) => jsonString(copyTextField(f)) },
};

/** The COPY statement of a table's text: its columns in order, its rows in the table's order. */
export function copyStatement(table: string, schema: TableSchema): string {
  const columns = schema.columns.map((c) => quoteId(c.name)).join(', ');
  const order = orderColumns(schema).map(quoteId).join(', ');
  return `copy (select ${columns} from ${quoteId(table)} order by ${order}) to stdout`;
}

/** Streams a table's text through one connection of the pool, released when the stream ends. */
export function postgresText(
  pool: pg.Pool,
  table: string,
  schema: TableSchema,
  format: ExportFormat,
): Readable {
  const lines = new LinesFromCopyText(schema, format);
  return Readable.from(copyOut(pool, copyStatement(table, schema), lines), { objectMode: false });
}

async function* copyOut(pool: pg.Pool, sql: string, lines: LinesFromCopyText): AsyncGenerator<Buffer> {
  const client = await pool.connect();
  let finished = false;
  try {
    // SET LOCAL: the pooled connection goes back with its usual settings.
    await client.query(`begin read only;
      set local extra_float_digits = 1; set local client_encoding = 'UTF8'`);
    for await (const chunk of client.query(copyTo(sql)) as AsyncIterable<Buffer>) {
      const out = lines.convert(chunk);
      if (out.length > 0) yield out;
    }
    await client.query('commit');
    finished = true;
  } finally {
    // Stopped in the middle of COPY (the download was cut off): the connection cannot be reused.
    client.release(finished ? undefined : new Error('export stopped'));
  }
}

/**
 * The rows of a query (its values written in, no parameters) read whole through COPY's text, each
 * made into what `row` returns from its fields as PostgreSQL prints them (null for SQL null) as
 * soon as its line arrives: only what `row` keeps outlives the chunk it came in. The fields' array
 * is one array refilled for every row (copy what you keep of it); nothing is parsed into numbers
 * or objects on the way. For results of a page's size, not for whole tables (copyOut streams those).
 */
export async function copyRows<T>(
  pool: pg.Pool,
  query: string,
  row: (fields: readonly (string | null)[]) => T,
  /** Planner settings for this query alone (`set local`), e.g. `enable_hashjoin: 'off'`. */
  planner: Record<string, 'on' | 'off'> = {},
): Promise<T[]> {
  const client = await pool.connect();
  let finished = false;
  try {
    // Literals in the query are read with backslashes as plain characters, whatever the server's
    // default: a text value written in cannot end its quotes.
    const plan = Object.entries(planner).map(([name, value]) => `set local ${name} = ${value};`);
    await client.query(`begin read only;
      set local standard_conforming_strings = on;
      set local extra_float_digits = 1; set local client_encoding = 'UTF8'; ${plan.join(' ')}`);
    const rows: T[] = [];
    const fields: (string | null)[] = [];
    // Each line of `text` (whole lines, LF-ended), its fields scanned in place: no array of lines
    // per chunk nor of fields per row, short-lived garbage that a page of 10,000 changes collected.
    const toRows = (text: string) => {
      let at = 0;
      while (at < text.length) {
        const lineEnd = text.indexOf('\n', at);
        const end = lineEnd < 0 ? text.length : lineEnd;
        fields.length = 0;
        while (at <= end) {
          const tab = text.indexOf('\t', at);
          const fieldEnd = tab < 0 || tab > end ? end : tab;
          const field = text.slice(at, fieldEnd);
          fields.push(field === NULL ? null : copyTextField(field));
          at = fieldEnd + 1;
        }
        rows.push(row(fields));
      }
    };
    // A line cut across chunks waits for the next (LF never occurs inside a UTF-8 character).
    let rest: Buffer = Buffer.alloc(0);
    for await (const chunk of client.query(copyTo(`copy (${query}) to stdout`)) as AsyncIterable<Buffer>) {
      const end = chunk.lastIndexOf(LF) + 1;
      if (end === 0) {
        rest = Buffer.concat([rest, chunk]);
        continue;
      }
      toRows(
        (rest.length > 0 ? Buffer.concat([rest, chunk.subarray(0, end)]) : chunk.subarray(0, end)).toString(
          'utf8',
        ),
      );
      rest = chunk.subarray(end);
    }
    toRows(rest.toString('utf8'));
    await client.query('commit');
    finished = true;
    return rows;
  } finally {
    client.release(finished ? undefined : new Error('copy stopped'));
  }
}

const LF = 0x0a;

/**
 * COPY text lines (tab-separated fields, LF-ended) rendered as the format's lines: CSV (CRLF, null
 * an empty field) or JSON objects of the schema's properties in order, as JSON.stringify writes
 * them. A line cut across chunks is kept for the next (an LF byte never occurs inside a UTF-8
 * character, nor inside a field: COPY writes it as `\n`).
 */
export class LinesFromCopyText {
  private rest: Buffer = Buffer.alloc(0);
  private readonly render: ((field: string) => string)[];
  /** What goes before each field, and after the last. */
  private readonly before: string[];
  private readonly end: string;
  private readonly nullText: string;

  constructor(schema: TableSchema, format: ExportFormat) {
    this.render = schema.columns.map((c) => RENDER[format][c.kind]);
    const n = schema.columns.length;
    if (format === 'csv') {
      this.before = schema.columns.map((_, i) => (i === 0 ? '' : ','));
      this.end = '\r\n';
      this.nullText = '';
    } else {
      this.before = jsonKeys(schema);
      this.end = n === 0 ? '{}\n' : '}\n';
      this.nullText = 'null';
    }
  }

  convert(chunk: Buffer): Buffer {
    const last = chunk.lastIndexOf(LF);
    if (last < 0) {
      this.rest = Buffer.concat([this.rest, chunk]);
      return Buffer.alloc(0);
    }
    const whole = chunk.subarray(0, last + 1);
    // Decoded together: the kept bytes may end inside a character the chunk completes.
    const text = (this.rest.length > 0 ? Buffer.concat([this.rest, whole]) : whole).toString('utf8');
    this.rest = Buffer.from(chunk.subarray(last + 1));
    const n = this.render.length;
    let out = '';
    let at = 0;
    while (at < text.length) {
      const lineEnd = text.indexOf('\n', at);
      for (let i = 0; i < n; i++) {
        const fieldEnd = i === n - 1 ? lineEnd : text.indexOf('\t', at);
        const field = text.slice(at, fieldEnd);
        out += this.before[i] as string;
        out += field === NULL ? this.nullText : (this.render[i] as (field: string) => string)(field);
        at = fieldEnd + 1;
      }
      out += this.end;
      at = lineEnd + 1;
    }
    return Buffer.from(out, 'utf8');
  }
}
