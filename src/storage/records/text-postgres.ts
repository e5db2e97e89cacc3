// A whole PostgreSQL records table as text, by `COPY (SELECT …) TO STDOUT`: the server renders the
// values (one process apart, on another core), Node only passes bytes on. The SELECT shapes each
// value so that COPY's bytes are those of the rendering the record store promises (streamText):
// - CSV: COPY's own CSV quoting is ours (a field is quoted when it holds `"`, `,`, CR or LF, quotes
//   doubled), except that COPY quotes an empty string (so it is selected as null, which is an empty
//   field as well), ends lines in LF (a pass over the bytes adds the CR outside quotes) and quotes
//   `\.` alone on a line (a table of one column gets an empty column ahead, cut again).
// - NDJSON: the JSON object of a row is built in SQL (to_json escapes strings as JSON.stringify
//   does) and COPY'd as CSV with control characters as delimiter and quote, which a JSON line never
//   holds raw: so nothing is quoted or escaped, each line passes as it is.
// - float64: PostgreSQL's shortest round-trip digits are JavaScript's; only the notation differs
//   outside [1e-4, 1e15) (PostgreSQL `1e-05`, `1.5e+16`; JavaScript `0.00001`, `15000000000000000`),
//   and such values are rewritten in SQL. int64 is printed digit for digit; booleans as true/false.
import { Readable } from 'node:stream';
import type pg from 'pg';
import { to as copyTo } from 'pg-copy-streams';
import type { ExportFormat } from '../db/tables.js';
import { orderColumns, quoteId, type TableSchema, type ValueKind } from './record-store.js';

/** One value of a column as COPY CSV should print it (null prints as an empty field). */
const CSV_VALUE: Record<ValueKind, (column: string) => string> = {
  text: (c) => `nullif(${c}, '')`,
  int64: (c) => c,
  float64: (c) => jsNumber(c),
  boolean: (c) => booleanText(c),
};

/** One value of a column as JSON text, never null (a null value is `null`). */
const JSON_VALUE: Record<ValueKind, (column: string) => string> = {
  text: (c) => `coalesce(to_json(${c})::text, 'null')`,
  int64: (c) => `coalesce(${c}::text, 'null')`,
  float64: (c) => `coalesce(${jsNumber(c)}, 'null')`,
  boolean: (c) => `coalesce(${booleanText(c)}, 'null')`,
};

const booleanText = (c: string) => `case when ${c} then 'true' when not ${c} then 'false' end`;

/** A float8 as JavaScript's String(n) writes it (null stays null). */
export function jsNumber(c: string): string {
  return `case when ${c} is null then null when ${c} = 0 then '0'
    when abs(${c}) >= 1e-4 and abs(${c}) < 1e15 then ${c}::text
    when abs(${c}) >= ${2 ** 53} then ${largeNumber(c)}
    else ${fromScientific(`${c}::text`)} end`;
}

/**
 * A float8 of 2^53 or more (an integer) as JavaScript writes it. Where a shorter decimal lies
 * exactly halfway to a neighbouring double, JavaScript takes it (it reads back as the same double
 * under round-half-even), PostgreSQL does not (`1e+23` against `9.999999999999999e+22`). Only such
 * large values have halfway points with few digits, so only they take this (slow, rare) way: the
 * exact integer, then the fewest significant digits that read back as the same double, nearest
 * first. Aliases start with `#`, which no property name may hold.
 */
function largeNumber(c: string): string {
  const digits = `rtrim("#t", '0')`;
  return `(select case when ${c} < 0 then '-' else '' end || case when length("#t") <= 21 then "#t"
      else left(${digits}, 1) || case when length(${digits}) > 1 then '.' || substr(${digits}, 2) else '' end
        || 'e+' || (length("#t") - 1)::text end
    from (select trunc("#c")::text "#t"
      from (select abs(${c}) "#a") "#s",
      lateral (select greatest(0, floor(ln("#a") / ln(2))::int - 53) "#e") "#p",
      lateral (select trunc(("#a" / 2::float8 ^ "#e")::bigint::numeric * 2::numeric ^ "#e") "#x") "#q",
      lateral (select length("#x"::text) "#n") "#r",
      generate_series(1, 17) "#k",
      lateral (values (round("#x", "#k" - "#n")), (trunc("#x", "#k" - "#n")),
        (trunc("#x", "#k" - "#n") + 10::numeric ^ ("#n" - "#k"))) "#v"("#c")
      -- Beyond the halfway point above the largest double, a cast would fail: such a candidate is none.
      where case when "#c" < 2::numeric ^ 1024 - 2::numeric ^ 970 then "#c"::float8 = "#a" else false end
      order by "#k", abs("#c" - "#x") limit 1) "#w")`;
}

/** PostgreSQL's scientific notation (`-1.25e+16`, `1e-07`) as JavaScript's text of the number. */
function fromScientific(t: string): string {
  const sign = `case when left(${t}, 1) = '-' then '-' else '' end`;
  const mantissa = `split_part(${t}, 'e', 1)`;
  const e = `split_part(${t}, 'e', 2)::int`;
  const digits = `replace(ltrim(${mantissa}, '-'), '.', '')`;
  return `case
    when ${e} between -6 and -1 then ${sign} || '0.' || repeat('0', -${e} - 1) || ${digits}
    when ${e} between 0 and 20 then ${sign} || case when length(${digits}) <= ${e} + 1
      then ${digits} || repeat('0', ${e} + 1 - length(${digits}))
      else left(${digits}, ${e} + 1) || '.' || substr(${digits}, ${e} + 2) end
    else ${mantissa} || 'e' || case when ${e} < 0 then '-' else '+' end || abs(${e})::text end`;
}

/** A text as an SQL string literal (standard_conforming_strings is set on for the statement). */
const literal = (s: string) => `'${s.replace(/'/g, "''")}'`;

/** The COPY statement of a table's text, and whether each line starts with a column to cut. */
export function copyStatement(
  table: string,
  schema: TableSchema,
  format: ExportFormat,
): { sql: string; leadingColumn: boolean } {
  const order = `order by ${orderColumns(schema).map(quoteId).join(', ')}`;
  const from = `from ${quoteId(table)} ${order}`;
  if (format === 'ndjson') {
    const parts = schema.columns.map(
      (c, i) =>
        `${literal(`${i === 0 ? '{' : ','}${JSON.stringify(c.name)}:`)} || ${JSON_VALUE[c.kind](quoteId(c.name))}`,
    );
    const line = parts.length === 0 ? `'{}'` : `${parts.join(' || ')} || '}'`;
    return {
      sql: `copy (select ${line} ${from}) to stdout with (format csv, delimiter E'\\x02', quote E'\\x01')`,
      leadingColumn: false,
    };
  }
  const values = schema.columns.map((c) => CSV_VALUE[c.kind](quoteId(c.name)));
  // COPY quotes `\.` when it is a line's only field: with a second column it never is.
  const leadingColumn = values.length === 1;
  const select = leadingColumn ? ['null', ...values] : values;
  return { sql: `copy (select ${select.join(', ')} ${from}) to stdout with (format csv)`, leadingColumn };
}

/** Streams a table's text through one connection of the pool, released when the stream ends. */
export function postgresText(
  pool: pg.Pool,
  table: string,
  schema: TableSchema,
  format: ExportFormat,
): Readable {
  const { sql, leadingColumn } = copyStatement(table, schema, format);
  return Readable.from(copyOut(pool, sql, format === 'csv' ? new CsvLineEnds(leadingColumn) : null), {
    objectMode: false,
  });
}

async function* copyOut(pool: pg.Pool, sql: string, lineEnds: CsvLineEnds | null): AsyncGenerator<Buffer> {
  const client = await pool.connect();
  let finished = false;
  try {
    // SET LOCAL: the pooled connection goes back with its usual settings.
    await client.query(`begin read only;
      set local extra_float_digits = 1; set local standard_conforming_strings = on;
      set local client_encoding = 'UTF8'`);
    for await (const chunk of client.query(copyTo(sql)) as AsyncIterable<Buffer>) {
      yield lineEnds === null ? chunk : lineEnds.convert(chunk);
    }
    await client.query('commit');
    finished = true;
  } finally {
    // Stopped in the middle of COPY (the download was cut off): the connection cannot be reused.
    client.release(finished ? undefined : new Error('export stopped'));
  }
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;

/** COPY's CSV lines end in LF; ours in CRLF: adds CR before each LF outside quotes, across chunks. */
export class CsvLineEnds {
  private quoted = false;
  private atLineStart = true;

  /** `cutFirstByte`: each line starts with an empty column to cut (its comma). */
  constructor(private readonly cutFirstByte: boolean) {}

  convert(chunk: Buffer): Buffer {
    const out = Buffer.allocUnsafe(chunk.length * 2);
    let j = 0;
    let quoted = this.quoted;
    let atLineStart = this.atLineStart;
    const cut = this.cutFirstByte;
    for (let i = 0; i < chunk.length; i++) {
      const b = chunk[i] as number;
      if (atLineStart) {
        atLineStart = false;
        if (cut) continue;
      }
      if (b === QUOTE) {
        quoted = !quoted; // an escaped quote ("") toggles twice
      } else if (b === LF && !quoted) {
        out[j++] = CR;
        atLineStart = true;
      }
      out[j++] = b;
    }
    this.quoted = quoted;
    this.atLineStart = atLineStart;
    return out.subarray(0, j);
  }
}
