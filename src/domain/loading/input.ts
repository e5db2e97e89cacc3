// The bytes of an upload as UTF-8 text chunks: gunzipped when they start with the gzip magic
// number, the BOM removed, reading stopped (and the input destroyed) on abort.
import { Readable, addAbortSignal, pipeline } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createGunzip } from 'node:zlib';

const GZIP_MAGIC = [0x1f, 0x8b] as const;
const CHUNK_BYTES = 64 * 1024;
const MAX_TEXT_CHUNK = 256 * 1024;
// Leading whitespace looked at to detect the format; past it the input is taken as CSV.
const MAX_PEEK_CHARS = 1024 * 1024;

/** Text chunks of the input, decompressed when it is gzip; throws the signal's reason on abort. */
export async function* textChunks(
  input: Readable | AsyncIterable<Buffer>,
  signal?: AbortSignal,
): AsyncGenerator<string, void, undefined> {
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
    if (head[0] === GZIP_MAGIC[0] && head[1] === GZIP_MAGIC[1]) {
      const gunzip = createGunzip({ chunkSize: CHUNK_BYTES });
      const compressed = Readable.from(body, { objectMode: false });
      streams.push(compressed, gunzip);
      // Errors (a corrupt archive, an abort) reach the reader below through gunzip.
      pipeline(compressed, gunzip, () => undefined);
      body = gunzip;
    }
    const decoder = new StringDecoder('utf8');
    let first = true;
    for await (const chunk of body) {
      signal?.throwIfAborted();
      let text = decoder.write(chunk);
      if (first && text.length > 0) {
        first = false;
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
      }
      // Bounded pieces keep each parser call, and the rows it makes at once, small.
      for (let i = 0; i < text.length; i += MAX_TEXT_CHUNK) yield text.slice(i, i + MAX_TEXT_CHUNK);
    }
    signal?.throwIfAborted();
    const rest = decoder.end();
    if (rest.length > 0) yield rest;
  } catch (e) {
    signal?.throwIfAborted(); // the signal's own reason, not the stream's wrapped AbortError
    throw e;
  } finally {
    // Stops reading on abort, on an error and when the consumer quits early.
    for (const stream of streams) stream.destroy();
  }
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
