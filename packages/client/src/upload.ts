// Sending a file to a signed upload URL: one PUT of the whole file, or a resumable session that
// takes it in slices (Google Cloud Storage semantics: 308 with `Range` until the last slice) and
// resumes after a failed slice from what the service says it persisted. Memory holds at most one
// slice; progress is reported as bytes go out.
import { createReadStream } from 'node:fs';
import { open, stat } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { extname } from 'node:path';
import { describeSigned, sleep, type FetchLike } from './http.js';
import { problemFromResponse } from './problem.js';
import type { UploadFormat } from './types.js';

/** What to upload: a file by path, bytes or text in memory, or a stream (its size when known). */
export type UploadSource =
  { path: string } | { data: Uint8Array | string } | { stream: AsyncIterable<Uint8Array>; size?: number };

/** How far an upload is: bytes the service has (or that went out), of how many (null: unknown). */
export interface UploadProgress {
  bytesSent: number;
  bytesTotal: number | null;
}

/** What the service answers once the whole file is stored. */
export interface UploadReceipt {
  datasetId: string;
  jobId: string;
  bytes: number;
}

export interface PutOptions {
  /** The job the upload URL was made for. */
  job: { datasetId: string; jobId: string };
  /** The PUT's Content-Type (it decides the parser). */
  mediaType: string;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
}

export interface ResumableOptions extends PutOptions {
  /** Bytes per slice; default 8 MiB. */
  chunkSize?: number;
  /** Tries of one slice before giving up (network errors, 5xx, 409 while another PUT streams); default 5. */
  retries?: number;
}

/** The media type that makes the service parse `format`. */
export const MEDIA_TYPES: Record<UploadFormat, string> = {
  csv: 'text/csv',
  tsv: 'text/tab-separated-values',
  json: 'application/json',
};

/** The format of a file by its name (`.csv`, `.tsv`, `.json`, `.ndjson`, `.jsonl`, with `.gz` too). */
export function formatOfName(name: string): UploadFormat | null {
  const ext = extname(name.replace(/\.gz$/i, '')).toLowerCase().slice(1);
  if (ext === 'csv' || ext === 'tsv') return ext;
  if (ext === 'json' || ext === 'ndjson' || ext === 'jsonl') return 'json';
  return null;
}

/** The size of a source, when it can be known before reading it. */
export async function sizeOf(source: UploadSource): Promise<number | null> {
  if ('path' in source) return (await stat(source.path)).size;
  if ('data' in source) return bytesOf(source.data).length;
  return source.size ?? null;
}

function bytesOf(data: Uint8Array | string): Uint8Array {
  return typeof data === 'string' ? new TextEncoder().encode(data) : data;
}

/**
 * PUTs the whole source to a single-request upload URL, streamed with backpressure: at most a few
 * chunks are in memory whatever the file's size. Through node:http(s) rather than fetch: Node's
 * fetch reads a request body as fast as the disk gives it, whatever the socket takes (measured: a
 * 102 MiB file to a server taking 50 MB/s held 112 MiB of buffers; through node:http, flat).
 */
export async function putWhole(
  url: string,
  source: UploadSource,
  options: PutOptions,
): Promise<UploadReceipt> {
  const total = await sizeOf(source);
  let sent = 0;
  const counted = async function* () {
    for await (const chunk of chunksOf(source)) {
      sent += chunk.length;
      options.onProgress?.({ bytesSent: sent, bytesTotal: total });
      yield chunk;
    }
  };
  const headers: Record<string, string> = { 'content-type': options.mediaType };
  if (total !== null) headers['content-length'] = String(total);
  const res = await streamedPut(url, headers, counted(), options.signal);
  if (res.status !== 200) throw await problemFromResponse(res, describeSigned('PUT', url));
  // The service answers what it stored; an object store's presigned URL (S3_TRANSFERS=direct)
  // answers 200 with no body, and the job learns of the file from the store.
  const text = await res.text();
  if ((res.headers.get('content-type') ?? '').includes('json') && text !== '')
    return JSON.parse(text) as UploadReceipt;
  return { datasetId: options.job.datasetId, jobId: options.job.jobId, bytes: sent };
}

/** One PUT with a streamed body, answered as a fetch Response (its body is small: JSON or a problem). */
async function streamedPut(
  url: string,
  headers: Record<string, string>,
  body: AsyncIterable<Uint8Array>,
  signal: AbortSignal | undefined,
): Promise<Response> {
  const target = new URL(url);
  const req = (target.protocol === 'https:' ? httpsRequest : httpRequest)(target, {
    method: 'PUT',
    headers,
    ...(signal !== undefined ? { signal } : {}),
  });
  const answered = new Promise<IncomingMessage>((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', reject);
  });
  // A refusal (413, 403) may come before the body is sent, and the connection close under it:
  // the answer counts, not the broken pipe.
  const sending = pipeline(Readable.from(body), req).then(
    () => null,
    (err: unknown) => err,
  );
  const res = await answered;
  const chunks: Buffer[] = [];
  for await (const chunk of res) chunks.push(chunk as Buffer);
  await sending;
  const responseHeaders = new Headers();
  for (const [name, value] of Object.entries(res.headers)) {
    for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value])
      responseHeaders.append(name, v);
  }
  const status = res.statusCode ?? 0;
  const content = chunks.length === 0 || status === 204 || status === 304 ? null : Buffer.concat(chunks);
  return new Response(content, { status, statusText: res.statusMessage ?? '', headers: responseHeaders });
}

/** The source's bytes in pieces as they are read. */
async function* chunksOf(source: UploadSource): AsyncGenerator<Uint8Array> {
  if ('data' in source) {
    yield bytesOf(source.data);
    return;
  }
  const stream: AsyncIterable<Uint8Array> = 'path' in source ? createReadStream(source.path) : source.stream;
  for await (const chunk of stream) yield chunk;
}

/** Reads slices of a source by offset: files and memory seek; a stream keeps the slice last read. */
interface SliceReader {
  /** Up to `length` bytes from `start`, and whether they reach the end of the source. */
  read(start: number, length: number): Promise<{ bytes: Uint8Array; last: boolean }>;
  close(): Promise<void>;
}

async function sliceReader(source: UploadSource, total: number | null): Promise<SliceReader> {
  if ('path' in source) {
    const handle = await open(source.path, 'r');
    return {
      async read(start, length) {
        const size = total ?? 0;
        const buffer = new Uint8Array(Math.max(0, Math.min(length, size - start)));
        let got = 0;
        while (got < buffer.length) {
          const { bytesRead } = await handle.read(buffer, got, buffer.length - got, start + got);
          if (bytesRead === 0) throw new Error(`${source.path} is shorter than when the upload began`);
          got += bytesRead;
        }
        return { bytes: buffer, last: start + buffer.length >= size };
      },
      close: () => handle.close(),
    };
  }
  if ('data' in source) {
    const data = bytesOf(source.data);
    return {
      read: async (start, length) => {
        const bytes = data.subarray(start, start + length);
        return { bytes, last: start + bytes.length >= data.length };
      },
      close: async () => undefined,
    };
  }
  return new StreamSlices(source.stream[Symbol.asyncIterator]());
}

/** Slices of a stream: what lies before the slice asked for is dropped (the service has it). */
class StreamSlices implements SliceReader {
  private window: Uint8Array = new Uint8Array(0);
  private windowStart = 0;
  private ended = false;

  constructor(private readonly iterator: AsyncIterator<Uint8Array>) {}

  async read(start: number, length: number): Promise<{ bytes: Uint8Array; last: boolean }> {
    if (start < this.windowStart)
      throw new Error(`the upload stream cannot go back to byte ${start} (the service asked for it again)`);
    this.window = this.window.subarray(Math.min(start - this.windowStart, this.window.length));
    this.windowStart = start;
    const parts: Uint8Array[] = [this.window];
    let have = this.window.length;
    while (have < length + 1 && !this.ended) {
      // One byte beyond the slice tells whether the slice is the last.
      const next = await this.iterator.next();
      if (next.done === true) this.ended = true;
      else {
        parts.push(next.value);
        have += next.value.length;
      }
    }
    if (parts.length > 1) this.window = concat(parts, have);
    const bytes = this.window.subarray(0, length);
    return { bytes, last: this.ended && bytes.length === this.window.length };
  }

  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}

function concat(parts: Uint8Array[], length: number): Uint8Array {
  const out = new Uint8Array(length);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** Sends the source in slices to a resumable session URL, resuming after failures. */
export async function putResumable(
  fetch: FetchLike,
  url: string,
  source: UploadSource,
  options: ResumableOptions,
): Promise<UploadReceipt> {
  const total = await sizeOf(source);
  if (total === 0) return putWhole(url, source, options); // no byte to slice
  const chunkSize = options.chunkSize ?? 8 * 1024 * 1024;
  if (!Number.isInteger(chunkSize) || chunkSize < 1)
    throw new RangeError('chunkSize must be a positive integer');
  const retries = options.retries ?? 5;
  const what = describeSigned('PUT', url);
  const reader = await sliceReader(source, total);
  try {
    let offset = 0;
    let failures = 0;
    for (;;) {
      const { bytes, last } = await reader.read(offset, chunkSize);
      const end = offset + bytes.length - 1;
      const declaredTotal = last ? String(offset + bytes.length) : total === null ? '*' : String(total);
      let res: Response;
      try {
        res = await fetch(url, {
          method: 'PUT',
          headers: {
            'content-type': options.mediaType,
            'content-range': `bytes ${offset}-${end}/${declaredTotal}`,
          },
          body: bytes,
          ...(options.signal !== undefined ? { signal: options.signal } : {}),
        });
      } catch (err) {
        if (options.signal?.aborted === true || ++failures > retries) throw err;
        const at = await resumePoint(fetch, url, declaredTotal, failures, options, what);
        if (typeof at !== 'number') return at;
        offset = at;
        continue;
      }
      if (res.status === 200) {
        options.onProgress?.({ bytesSent: offset + bytes.length, bytesTotal: offset + bytes.length });
        return (await res.json()) as UploadReceipt;
      }
      if (res.status === 308) {
        await res.body?.cancel();
        const next = persistedOf(res);
        // A session that keeps answering without taking the bytes must not loop for ever.
        if (next > offset) failures = 0;
        else if (++failures > retries)
          throw new Error(`${what}: the session took no bytes from ${offset} on`);
        offset = next;
        options.onProgress?.({ bytesSent: offset, bytesTotal: total });
        continue;
      }
      const problem = await problemFromResponse(res, what);
      if (!retryable(res.status) || ++failures > retries) throw problem;
      const at = await resumePoint(fetch, url, declaredTotal, failures, options, what);
      if (typeof at !== 'number') return at;
      offset = at;
    }
  } finally {
    await reader.close();
  }
}

/** Server trouble, or another PUT still streaming into the session: worth asking again. */
function retryable(status: number): boolean {
  return status === 409 || status === 429 || status >= 500;
}

/** The first byte the service does not hold, from a 308's `Range: bytes=0-LAST` (none: 0). */
function persistedOf(res: Response): number {
  const match = /^bytes=0-(\d+)$/.exec(res.headers.get('range') ?? '');
  return match === null ? 0 : Number(match[1]) + 1;
}

// After a failed slice: waits, then asks the session where it stands (Content-Range `bytes */TOTAL`).
async function resumePoint(
  fetch: FetchLike,
  url: string,
  total: string,
  failures: number,
  options: ResumableOptions,
  what: string,
): Promise<number | UploadReceipt> {
  await sleep(Math.min(8000, 250 * 2 ** (failures - 1)), options.signal);
  const res = await fetch(url, {
    method: 'PUT',
    headers: { 'content-range': `bytes */${total}` },
    ...(options.signal !== undefined ? { signal: options.signal } : {}),
  });
  if (res.status === 308) {
    await res.body?.cancel();
    return persistedOf(res);
  }
  // The slice that completed the file got through, only its answer was lost.
  if (res.status === 200) return (await res.json()) as UploadReceipt;
  throw await problemFromResponse(res, what);
}
