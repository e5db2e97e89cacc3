// Streaming CSV/TSV reader: RFC 4180 fields via papaparse's core parser, fed chunk by chunk here
// so that we control backpressure, record line numbers and the longest record allowed.
//
// Parser chosen by measurement: tokenising 1M rows x 8 columns (100 MB, every 10th row quoted)
// on Node 20, CPU seconds on a busy 2-core machine: papaparse 1.6 (its core Parser fed chunks, as
// here; 5.9 through its object stream), csv-parser 8.7, csv-parse 9.2, @fast-csv/parse 15.7.
// The three others hand out one stream event per record, which is where their time goes.
import Papa from 'papaparse';
import { describeBadText } from '../datasets/column-types.js';
import type { CellValue, TextConverter } from './cells.js';
import { MAX_RECORD_CHARS, type LoadContext, type ParsedBatch } from './context.js';
import { columnLayout, guessDelimiter, type ColumnLayout } from './csv-header.js';
import { suspectText, textDefect } from './text.js';

/** Reads delimited text (header row first) into typed rows; `delimiter` undefined means guess it. */
export async function* readCsv(
  chunks: AsyncIterable<string>,
  ctx: LoadContext,
  delimiter: ',' | '\t' | undefined,
): AsyncGenerator<ParsedBatch> {
  const it = chunks[Symbol.asyncIterator]();
  let text = '';
  let ended = false;
  let newline = -1;
  while ((newline = text.indexOf('\n')) < 0 && !ended) {
    const next = await it.next();
    if (next.done) ended = true;
    else text += next.value;
    if (text.length > MAX_RECORD_CHARS) {
      ctx.fileError(1, 'the header line is too long');
      return;
    }
  }
  const headerLine = (newline < 0 ? text : text.slice(0, newline)).replace(/\r$/, '');
  if (headerLine.trim() === '') {
    ctx.fileError(1, 'expected a header row naming the properties');
    return;
  }
  const delim = delimiter ?? guessDelimiter(headerLine);
  // '\n' is always the row separator: a CRLF row leaves a '\r' that rowToCells strips, so files
  // with mixed line endings load too; '\r\n' inside quotes stays part of the value.
  const parser = new Papa.Parser({ delimiter: delim, newline: '\n', quoteChar: '"' });
  const header = (parser.parse(headerLine, 0, false) as Papa.ParseResult<string[]>).data[0] ?? [];
  const layout = columnLayout(header, ctx);

  text = newline < 0 ? '' : text.slice(newline + 1);
  let line = 2; // where the next record starts
  let carried = 0; // length of the unfinished record at the start of `text`
  // The records that came with the header are parsed before waiting for more: a slow source's
  // first rows count at once (live progress), not when its next chunk arrives.
  let waiting = text.length === 0;
  for (;;) {
    if (!ended && waiting) {
      const next = await it.next();
      if (next.done) ended = true;
      else {
        text += next.value;
        // A long unfinished record is re-scanned only once the text has doubled: linear overall.
        if (text.length < 2 * carried) continue;
      }
    }
    waiting = true;
    const result = parser.parse(text, 0, !ended) as Papa.ParseResult<string[]>;
    const consumed = ended ? text.length : result.meta.cursor;
    line = yield* takeRows(result, text, consumed, ended, line, layout, ctx);
    text = text.slice(consumed);
    carried = text.length;
    if (carried > MAX_RECORD_CHARS) {
      ctx.fileError(line, `a record is longer than ${MAX_RECORD_CHARS} characters (an unclosed quote?)`);
      break;
    }
    if (ended) break;
  }
  if (ctx.pending) yield ctx.take();
}

/** Checks and converts the rows of one parser call, handing out full batches; returns the next line. */
function* takeRows(
  result: Papa.ParseResult<string[]>,
  text: string,
  consumed: number,
  ended: boolean,
  line: number,
  layout: ColumnLayout,
  ctx: LoadContext,
): Generator<ParsedBatch, number, undefined> {
  const rows = result.data;
  const quoteErrors = new Map<number, Papa.ParseError>();
  for (const e of result.errors)
    if (e.row !== undefined && !quoteErrors.has(e.row)) quoteErrors.set(e.row, e);
  // Every row but a final unterminated one ends with '\n'; any other newline sits inside quotes.
  const terminators = ended ? rows.length - 1 : rows.length;
  const multiline = countNewlines(text, consumed) !== terminators;
  // Native scans of the whole text; only when they find a NUL or invalid bytes is each field looked at.
  const check = suspectText(text);
  let at = line; // where the record being checked starts; `line` is where the next one does
  ctx.recordText = recordTextOf(text, consumed, line, () => [at, line]);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] ?? [];
    const last = row.length - 1;
    const lastField = row[last] ?? '';
    if (lastField.charCodeAt(lastField.length - 1) === 0x0d) row[last] = lastField.slice(0, -1);
    at = line;
    line += multiline ? 1 + newlinesIn(row) : 1;
    if (row.length === 1 && row[0] === '') continue; // a blank line is not a record
    ctx.stats.rowsRead++;
    const quoteError = quoteErrors.size === 0 ? undefined : quoteErrors.get(r);
    if (quoteError !== undefined) {
      // An unclosed quote swallowed the rest of the file into this record: nothing after it can
      // be trusted, so it is a defect of the file, not of one record.
      if (quoteError.code === 'MissingQuotes') ctx.fileError(at, `malformed quotes: ${quoteError.message}`);
      else ctx.error(at, `malformed quotes: ${quoteError.message}`);
    } else if (row.length !== layout.width) {
      ctx.error(at, `the record has ${row.length} fields but the header has ${layout.width}`);
    } else {
      const cells = rowToCells(row, at, layout, ctx, check);
      if (cells !== undefined && layout.ok) ctx.accept(cells, at);
    }
    if (ctx.full) yield ctx.take();
  }
  return line;
}

/** Converts one record's fields to cells in schema order; undefined when any field is bad. */
function rowToCells(
  row: string[],
  line: number,
  layout: ColumnLayout,
  ctx: LoadContext,
  check: boolean,
): CellValue[] | undefined {
  const { columns, converters } = layout;
  const n = columns.length;
  // Reusing the parser's array saves an allocation per row, a good part of the time spent here.
  const cells: CellValue[] = layout.inPlace ? row : new Array<CellValue>(n);
  let ok = true;
  for (let p = 0; p < n; p++) {
    const column = columns[p] ?? -1;
    const text = column < 0 ? '' : (row[column] ?? '');
    if (text === '') {
      cells[p] = null;
      if (column >= 0 && ctx.required[p]) {
        ok = false;
        ctx.error(line, 'a value is required', ctx.names[p]);
      }
      continue;
    }
    const defect = check ? textDefect(text) : undefined;
    if (defect !== undefined) {
      ok = false;
      ctx.error(line, defect, ctx.names[p]);
      continue;
    }
    const value = (converters[p] as TextConverter)(text);
    if (value === undefined) {
      ok = false;
      ctx.error(line, describeBadText(ctx.types[p] ?? 'string', text), ctx.names[p]);
    } else cells[p] = value;
  }
  return ok ? cells : undefined;
}

/**
 * The text of the record being checked (`span()` gives the line it starts on and the line the next
 * one starts on), cut from the chunk's text by counting newlines. Only bad records ask for it, and
 * the search goes forward from where the last one ended: at most one pass over the chunk.
 */
function recordTextOf(
  text: string,
  consumed: number,
  firstLine: number,
  span: () => [number, number],
): () => string {
  let cursorLine = firstLine;
  let cursor = 0;
  const startOf = (line: number): number => {
    while (cursorLine < line && cursor < consumed) {
      const newline = text.indexOf('\n', cursor);
      cursor = newline < 0 || newline >= consumed ? consumed : newline + 1;
      cursorLine++;
    }
    return cursor;
  };
  return () => {
    const [from, to] = span();
    const start = startOf(from);
    const end = startOf(to);
    return text.slice(start, end).replace(/\r?\n$/, '');
  };
}

function countNewlines(text: string, end: number): number {
  let count = 0;
  for (let i = text.indexOf('\n'); i >= 0 && i < end; i = text.indexOf('\n', i + 1)) count++;
  return count;
}

function newlinesIn(row: string[]): number {
  let count = 0;
  for (const field of row) if (field.length > 0) count += countNewlines(field, field.length);
  return count;
}
