// Entry point of the parse-and-validate stage of loading: bytes in, batches of typed rows out.
import type { Readable } from 'node:stream';
import type { DatasetSchema } from '../datasets/schema.js';
import { LoadContext, type ParsedBatch, type ParseStats, type RecordFields } from './context.js';
import { readCsv } from './csv.js';
import type { ErrorCollector } from './errors.js';
import { peekFirstChar, textChunks } from './input.js';
import type { InvalidUtf8 } from './text.js';
import { readJsonArray } from './json-array.js';
import { readNdjson } from './ndjson.js';

/** The format of an upload; `auto` looks at its first bytes. */
export type InputFormat = 'csv' | 'tsv' | 'json' | 'auto';

/** How to parse: the dataset's schema, the format, and where errors and counters go. */
export interface ParseOptions {
  schema: DatasetSchema;
  /** What the records hold: every property (the default), or the primary key's values only. */
  fields?: RecordFields;
  format: InputFormat;
  errors: ErrorCollector;
  /** Valid rows per batch handed out (about; a batch may exceed it by one chunk's rows). */
  batchSize?: number;
  signal?: AbortSignal;
  /** Updated while parsing; read `rowsRead` once the generator is done. */
  stats?: ParseStats;
  /** Bytes that are not UTF-8: a row error naming line and property (default), or U+FFFD. */
  invalidUtf8?: InvalidUtf8;
  /** The most bytes a gzip input may inflate to; past it the parse throws an InputFailure. */
  maxInflatedBytes?: number;
}

/** Rows per batch by default: big enough for fast bulk inserts, small enough to keep memory flat. */
export const DEFAULT_BATCH_SIZE = 2000;

/**
 * Detects gzip by magic bytes (0x1f 0x8b) and unpacks it; detects the format when 'auto'; yields
 * batches of valid typed rows; records every bad row in `errors` (a bad row is never yielded).
 * Line numbers are physical lines where a record starts (the CSV header is line 1; for a JSON
 * array, the line of the object's `{`). A value holding a NUL character or bytes that are not UTF-8
 * is a row error. On abort it throws the signal's reason; a broken or oversized gzip stream throws
 * an InputFailure.
 */
export async function* parseRecords(
  input: Readable | AsyncIterable<Buffer>,
  options: ParseOptions,
): AsyncGenerator<ParsedBatch, void, undefined> {
  const { schema, format, errors, signal } = options;
  const stats = options.stats ?? { rowsRead: 0 };
  const batchSize = Math.max(1, options.batchSize ?? DEFAULT_BATCH_SIZE);
  const ctx = new LoadContext(schema, errors, stats, batchSize, options.fields);
  const text = textChunks(input, {
    signal,
    invalidUtf8: options.invalidUtf8,
    maxInflatedBytes: options.maxInflatedBytes,
  });
  try {
    if (format === 'csv' || format === 'tsv') {
      yield* readCsv(text, ctx, format === 'csv' ? ',' : '\t');
      return;
    }
    const { first, chunks } = await peekFirstChar(text);
    if (first === '[') yield* readJsonArray(chunks, ctx);
    else if (first === '{') yield* readNdjson(chunks, ctx);
    else if (format === 'auto') yield* readCsv(chunks, ctx, undefined);
    else ctx.fileError(1, 'expected a JSON array of objects or newline-delimited JSON objects');
  } finally {
    await text.return(); // releases the input when the caller stops early
  }
}
