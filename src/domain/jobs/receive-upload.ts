// Receiving the file of an upload URL served by the service itself: one PUT of the whole file, or
// a resumable session with Google Cloud Storage's semantics, which partners' upload scripts speak:
// consecutive slices PUT with `Content-Range: bytes START-END/TOTAL`, each non-final one answered
// 308 with `Range: bytes=0-LAST` (the persisted prefix), the final one 200; `bytes */TOTAL` with no
// body asks where the session stands. Each slice is an object of its own, so what was persisted
// survives a restart on any node and any store, whatever the slice size, and memory stays flat.
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../storage/db/tables.js';
import { objectKeys, ObjectTooLarge, type ObjectStore } from '../../storage/objects/index.js';
import { problem } from '../../errors.js';
import { transitionJobIn } from './jobs.js';
import {
  advanceUpload,
  claimUpload,
  expireUpload,
  uploadTimeIsUp,
  withUploadClaim,
  type UploadProgress,
} from './uploads.js';
import {
  contentRangeProblem,
  declaredFormat,
  fileTooLargeMessage,
  formatNamedBy,
  formatOfUpload,
  parseContentRange,
  persistedRange,
  type ContentRange,
} from './upload-headers.js';
import { asUploadType, type ContentType } from './status.js';

/** A resumable session stays open this long after its last slice (and at least the URL's hour). */
export const RESUMABLE_IDLE_MS = 60 * 60 * 1000;
/** ...but never longer than this after it was opened. */
export const RESUMABLE_MAX_MS = 24 * 60 * 60 * 1000;

export interface UploadReceiverDeps {
  db: Kysely<Tables>;
  objects: ObjectStore;
  /** UPLOAD_MAX_BYTES: the largest file an upload may be. */
  maxBytes: number;
}

/** One PUT to an upload URL whose signature verified (its expiry is judged here, with the job). */
export interface UploadPut {
  jobId: string;
  /** Whether the URL's own expiry has passed (a resumable session in progress may outlive it). */
  urlExpired: boolean;
  contentType: string | undefined;
  contentRange: string | undefined;
  /** The declared Content-Length, or null when the body is chunked. */
  contentLength: number | null;
  body: Readable;
  /** A name unique to this PUT, held as the upload's claim while it streams. */
  claim: string;
}

/** What the PUT is answered. */
export type UploadAnswer =
  | { status: 200; body: { datasetId: string; jobId: string; bytes: number } }
  /** A resumable session still awaits bytes; `range` is the persisted prefix (null: none yet). */
  | { status: 308; range: string | null };

/** Receives one PUT of an upload URL; throws the problem to answer when it cannot be taken. */
export async function receiveUpload(deps: UploadReceiverDeps, put: UploadPut): Promise<UploadAnswer> {
  const job = await deps.db
    .selectFrom('dataset_jobs')
    .selectAll()
    .where('id', '=', put.jobId)
    .executeTakeFirst();
  if (job === undefined || job.job_type !== 'uploadUrl')
    throw problem('notFound', 'No upload is expected here.');
  const resumable = asUploadType(job.upload_type) === 'resumable';
  const expired =
    job.status === 'Expired' ||
    (job.status === 'Created' && (uploadTimeIsUp(job) || (put.urlExpired && !resumable)));
  if (expired) {
    await expireUpload(deps.db, deps.objects, job);
    throw resumable
      ? problem(
          'gone',
          'The resumable upload session has expired; open a new one with uploadUrl?type=resumable.',
          { code: 'upload_session_expired' },
        )
      : problem('forbidden', 'The upload URL has expired; ask for a new one.', {
          code: 'signed_url_expired',
        });
  }
  const range = parseContentRange(put.contentRange);
  return resumable ? receiveSlice(deps, job, put, range) : receiveWholeFile(deps, job, put, range);
}

/** A single-request URL: the whole file in one PUT, once. */
async function receiveWholeFile(
  deps: UploadReceiverDeps,
  job: DatasetJobRow,
  put: UploadPut,
  range: ContentRange,
): Promise<UploadAnswer> {
  // A client that sends a part here would believe a truncated upload complete.
  let total: number | null = null;
  if (range.kind === 'slice' && range.start === 0 && range.total !== null && range.end === range.total - 1) {
    total = range.total;
  } else if (range.kind !== 'whole') {
    throw problem(
      'invalid',
      'This upload URL takes the whole file in one PUT, but Content-Range names a part of it; ' +
        'ask for a resumable upload URL (uploadUrl?type=resumable) to send a file in slices.',
      {
        errors: { 'Content-Range': ['must be absent or name the whole file on a single-request upload URL'] },
      },
    );
  }
  if (job.status !== 'Created')
    throw problem('conflict', 'This upload URL was already used.', { code: 'upload_url_used' });
  const format = formatOfUpload(put.contentType, declaredFormat(job));
  checkLength(deps, put.contentLength, total);
  if (job.object_key === null) throw new Error(`upload job ${job.id} has no object key`);
  const objectKey = job.object_key;
  if (!(await claimUpload(deps.db, job.id, put.claim)))
    throw problem('conflict', 'A file is already being uploaded to this URL.', {
      code: 'upload_in_progress',
    });
  return withUploadClaim(deps.db, job.id, put.claim, async () => {
    const bytes = await store(deps, objectKey, put.body, total ?? deps.maxBytes, total === null);
    if (total !== null && bytes !== total) {
      await deps.objects.delete(objectKey);
      throw bodyDoesNotMatchRange(bytes, total);
    }
    const queued = await deps.db.transaction().execute((trx) =>
      transitionJobIn(
        trx,
        { id: job.id },
        {
          move: 'fileReceived',
          by: { kind: 'uploadClaimHolder', claim: put.claim },
          contentType: format,
          log: { message: `File received (${bytes} bytes, read as ${format}); queued.` },
        },
      ),
    );
    if (queued === undefined) {
      await deps.objects.delete(objectKey);
      throw problem('conflict', 'This upload URL was already used.', { code: 'upload_url_used' });
    }
    return { status: 200, body: { datasetId: job.dataset_id, jobId: job.id, bytes } };
  });
}

/** A resumable session: a status query, or the next slice of the file. */
async function receiveSlice(
  deps: UploadReceiverDeps,
  job: DatasetJobRow,
  put: UploadPut,
  range: ContentRange,
): Promise<UploadAnswer> {
  const received = Number(job.upload_received ?? 0);
  const knownTotal = job.upload_total === null ? null : Number(job.upload_total);
  if (job.status !== 'Created') {
    if (knownTotal !== null && received === knownTotal) {
      return { status: 200, body: { datasetId: job.dataset_id, jobId: job.id, bytes: received } };
    }
    throw problem('conflict', 'This upload session has ended.', { code: 'upload_session_ended' });
  }
  const total = range.kind === 'whole' ? null : range.total;
  if (total !== null && knownTotal !== null && total !== knownTotal) {
    throw contentRangeProblem(`declares a total of ${total} bytes, but the session's file has ${knownTotal}`);
  }
  if (total !== null && total > deps.maxBytes) throw tooLarge(deps.maxBytes);

  if (range.kind === 'query') {
    if (total !== null && total < received)
      throw contentRangeProblem(`declares ${total} bytes, fewer than persisted`);
    // `bytes */TOTAL` once every byte is there ends a session whose total was unknown until now.
    if (total !== null && total === received && received > 0) {
      return finish(deps, job, put, { from: received, to: received, total, format: null });
    }
    return { status: 308, range: persistedRange(received) };
  }
  if (range.kind === 'whole') {
    if (received > 0) {
      throw contentRangeProblem(
        'is missing: once a session has persisted bytes, each PUT must name its range',
      );
    }
    return finish(deps, job, put, { from: 0, to: null, total: null, format: formatNamedBy(put.contentType) });
  }
  // A slice that skips bytes, or repeats only bytes already persisted, is not stored: the answer
  // says where the session stands and the client resumes from there.
  if (range.start > received || range.end < received) return { status: 308, range: persistedRange(received) };
  if (put.contentLength !== null && put.contentLength !== range.end - range.start + 1) {
    throw contentRangeProblem(
      `names ${range.end - range.start + 1} bytes but Content-Length is ${put.contentLength}`,
    );
  }
  if (range.end + 1 > deps.maxBytes) throw tooLarge(deps.maxBytes);
  return finish(deps, job, put, {
    from: received,
    to: range.end + 1,
    total,
    skip: received - range.start,
    format: received === 0 ? formatNamedBy(put.contentType) : null,
  });
}

interface SliceSpec {
  /** The first byte this PUT adds (the persisted length). */
  from: number;
  /** One past the last byte it adds; null when the body's length decides (a whole file). */
  to: number | null;
  /** The file's total, when known now. */
  total: number | null;
  /** Leading bytes of the body already persisted by an earlier slice (an overlapping retry). */
  skip?: number;
  /** The format the first slice's Content-Type asks for, if it names one. */
  format: ContentType | null;
}

/** Stores the slice (if it adds bytes), advances the session, and queues the job when complete. */
async function finish(
  deps: UploadReceiverDeps,
  job: DatasetJobRow,
  put: UploadPut,
  slice: SliceSpec,
): Promise<UploadAnswer> {
  if (!(await claimUpload(deps.db, job.id, put.claim))) {
    throw problem(
      'conflict',
      'Another PUT is uploading to this session now; ask where it stands (Content-Range: bytes */*) and resume.',
    );
  }
  return withUploadClaim(deps.db, job.id, put.claim, async () => {
    let end = slice.to ?? slice.from;
    const key = objectKeys.uploadSlice(job.dataset_id, job.id, slice.from);
    if (slice.to === null || slice.to > slice.from) {
      const expected = slice.to === null ? null : slice.to - slice.from;
      const body = slice.skip !== undefined && slice.skip > 0 ? skipBytes(put.body, slice.skip) : put.body;
      const bytes = await store(deps, key, body, expected ?? deps.maxBytes, expected === null);
      if (expected !== null && bytes !== expected) {
        await deps.objects.delete(key);
        throw bodyDoesNotMatchRange(bytes + (slice.skip ?? 0), expected + (slice.skip ?? 0));
      }
      end = slice.from + bytes;
    }
    const total = slice.to === null ? end : slice.total;
    const complete = total !== null && end === total;
    const progress: UploadProgress = {
      upload_received: end,
      upload_expires_at: Math.max(
        Number(job.upload_expires_at ?? 0),
        Math.min(Date.now() + RESUMABLE_IDLE_MS, Date.parse(`${job.created_at}Z`) + RESUMABLE_MAX_MS),
      ),
      ...(total !== null ? { upload_total: total } : {}),
      ...(slice.format !== null ? { content_type: slice.format } : {}),
    };
    const advanced = await deps.db.transaction().execute(async (trx) => {
      if (!(await advanceUpload(trx, job.id, put.claim, slice.from, progress))) return false;
      if (!complete) return true;
      const format = slice.format ?? declaredFormat(job);
      const queued = await transitionJobIn(
        trx,
        { id: job.id },
        {
          move: 'fileReceived',
          by: { kind: 'uploadClaimHolder', claim: put.claim },
          log: { message: `File received (${end} bytes in a resumable session, read as ${format}); queued.` },
        },
      );
      return queued !== undefined;
    });
    if (!advanced)
      throw problem('conflict', 'The session moved on while this slice was stored; ask where it stands.', {
        code: 'upload_session_moved',
      });
    if (complete) return { status: 200, body: { datasetId: job.dataset_id, jobId: job.id, bytes: end } };
    return { status: 308, range: persistedRange(end) };
  });
}

/** Streams a body into the store; ObjectTooLarge past `limit` becomes 413, or 400 when the
 * limit is what Content-Range promised (`limitIsFileLimit` false). */
async function store(
  deps: UploadReceiverDeps,
  key: string,
  body: Readable,
  limit: number,
  limitIsFileLimit: boolean,
): Promise<number> {
  try {
    return (await deps.objects.put(key, body, { contentType: 'application/octet-stream', maxBytes: limit }))
      .size;
  } catch (err) {
    if (err instanceof ObjectTooLarge) {
      throw limitIsFileLimit ? tooLarge(deps.maxBytes) : bodyDoesNotMatchRange(limit + 1, limit);
    }
    throw err;
  }
}

function checkLength(deps: UploadReceiverDeps, contentLength: number | null, total: number | null): void {
  if (contentLength !== null && contentLength > deps.maxBytes) throw tooLarge(deps.maxBytes);
  if (total !== null && total > deps.maxBytes) throw tooLarge(deps.maxBytes);
  if (total !== null && contentLength !== null && contentLength !== total) {
    throw contentRangeProblem(`names ${total} bytes but Content-Length is ${contentLength}`);
  }
}

function bodyDoesNotMatchRange(got: number, promised: number) {
  return contentRangeProblem(
    got > promised
      ? `promised ${promised} bytes but the body is longer`
      : `promised ${promised} bytes but the body had ${got}`,
  );
}

function tooLarge(max: number) {
  return problem('tooLarge', fileTooLargeMessage(max), { code: 'file_too_large' });
}

/** The body without its first `n` bytes. */
function skipBytes(body: Readable, n: number): Readable {
  let left = n;
  const out = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback) {
      if (left >= chunk.length) {
        left -= chunk.length;
        done();
      } else {
        const rest = chunk.subarray(left);
        left = 0;
        done(null, rest);
      }
    },
  });
  body.once('error', (err) => out.destroy(err));
  return body.pipe(out);
}
