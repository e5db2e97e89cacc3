// The bytes of an upload as UTF-8 text chunks: gunzipped when they start with the gzip magic
// number (its inflated size bounded), the BOM removed, reading stopped (and the input destroyed)
// on abort. Bytes that are not UTF-8 are marked for the readers to report (text.ts).
import { Readable, addAbortSignal, pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { Utf8Decoder, type InvalidUtf8 } from './text.js';

const GZIP_MAGIC = [0x1f, 0x8b] as const;
const CHUNK_BYTES = 64 * 1024;
const MAX_TEXT_CHUNK = 256 * 1024;
// Leading whitespace looked at to detect the format; past it the input is taken as CSV.
const MAX_PEEK_CHARS = 1024 * 1024;

/** How the bytes become text. */
export interface TextOptions {
  signal?: AbortSignal | undefined;
  /** Bytes that are not UTF-8: marked for a row error (the default) or replaced by U+FFFD. */
  invalidUtf8?: InvalidUtf8 | undefined;
  /** The most bytes a gzip input may inflate to (MAX_INFLATED_BYTES); unbounded when left out. */
  maxInflatedBytes?: number | undefined;
}

/** A defect of the input's bytes as a whole (a broken or oversized gzip stream): nothing loads.
 * The message is shown to the caller. */
export class InputFailure extends Error {}

/** Text chunks of the input, decompressed when it is gzip; throws the signal's reason on abort,
 * an InputFailure when the compressed stream is broken or inflates past the limit. */
export async function* textChunks(
  input: Readable | AsyncIterable<Buffer>,
  options: TextOptions = {},
): AsyncGenerator<string, void, undefined> {
  const { signal } = options;
  const source = input instanceof Readable ? input : Readable.from(input, { objectMode: false });
  const streams: Readable[] = [source];
  if (signal !== undefined) addAbortSignal(signal, source);
  try {
    const bytes = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
    let head = Buffer.alloc(0);
    while (head.length < GZIP_MAGIC.length) {
      const next = await bytes.next();
      if (next.done) break;
      head = Buffer.concat([head, next.value]);
    }
    let body: AsyncIterable<Buffer> = prepend(head, bytes);
    const gzip = head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1];
    if (gzip) {
      const gunzip = createGunzip({ chunkSize: CHUNK_BYTES });
      const compressed = Readable.from(body, { objectMode: false });
      streams.push(compressed, gunzip);
      // Errors (a corrupt archive, an abort) reach the reader below through gunzip.
      pipeline(compressed, gunzip, () => undefined);
      body = gunzip;
    }
    const maxInflated = gzip ? (options.maxInflatedBytes ?? Infinity) : Infinity;
    let inflated = 0;
    const decoder = new Utf8Decoder(options.invalidUtf8 ?? 'reject');
    let first = true;
    for await (const chunk of body) {
      signal?.throwIfAborted();
      inflated += chunk.length;
      if (inflated > maxInflated) {
        throw new InputFailure(
          `The compressed file inflates to more than ${maxInflated} bytes (MAX_INFLATED_BYTES); nothing was loaded.`,
        );
      }
      let text = decoder.write(chunk);
      if (first && text.length > 0) {
        first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      yield* pieces(text);
    }
    signal?.throwIfAborted();
    const rest = decoder.end();
    if (rest.length > 0) yield rest;
  } catch (e) {
    signal?.throwIfAborted(); // the signal's own reason, not the stream's wrapped AbortError
    throw zlibFailure(e) ?? e;
  } finally {
    // Stops reading on abort, on an error and when the consumer quits early.
    for (const stream of streams) stream.destroy();
  }
}

/** Bounded pieces keep each parser call, and the rows it makes at once, small; a piece never ends
 * inside a surrogate pair (a lone half would look like a marked invalid byte). */
function* pieces(text: string): Generator<string> {
  if (text.length <= MAX_TEXT_CHUNK) {
    if (text.length > 0) yield text;
    return;
  }
  for (let i = 0; i < text.length;) {
    let end = Math.min(i + MAX_TEXT_CHUNK, text.length);
    const last = text.charCodeAt(end - 1);
    if (end < text.length && last >= 0xd800 && last <= 0xdbff) end++;
    yield text.slice(i, end);
    i = end;
  }
}

/** zlib's errors (the stream ended early, a bad header or checksum) as the caller's failure. */
function zlibFailure(e: unknown): InputFailure | undefined {
  const code = (e as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !code.startsWith('Z_')) return undefined;
  const what = code === 'Z_BUF_ERROR' ? 'truncated' : 'corrupt';
  const message = e instanceof Error ? e.message : code;
  return new InputFailure(
    `The compressed file is ${what} (gzip: ${message}); nothing was loaded. Compress it again and load it anew.`,
  );
}

async function* prepend(head: Buffer, rest: AsyncIterator<Buffer>): AsyncGenerator<Buffer> {
  if (head.length > 0) yield head;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}

/** The first character that is not whitespace (undefined for blank input) and all the chunks. */
export async function peekFirstChar(
  chunks: AsyncIterator<string>,
): Promise<{ first: string | undefined; chunks: AsyncIterable<string> }> {
  const seen: string[] = [];
  let first: string | undefined;
  let length = 0;
  while (first === undefined && length < MAX_PEEK_CHARS) {
    const next = await chunks.next();
    if (next.done) break;
    seen.push(next.value);
    length += next.value.length;
    first = /\S/.exec(next.value)?.[0];
  }
  return { first, chunks: replay(seen, chunks) };
}

async function* replay(seen: string[], rest: AsyncIterator<string>): AsyncGenerator<string> {
  yield* seen;
  for (;;) {
    const next = await rest.next();
    if (next.done) return;
    yield next.value;
  }
}
