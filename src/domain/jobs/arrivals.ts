// Uploads that go straight to an S3-compatible store (presigned PUT) pass the service by: it
// learns of them by looking (HEAD) for the objects of jobs awaiting upload, on a timer in the
// worker role and when a bucket notification names the object. Both paths end here, and the
// Created → Queued move is one guarded UPDATE, so a job is queued exactly once whoever sees it first.
import type { Kysely } from 'kysely';
import type { ContentType, Tables } from '../../storage/db/tables.js';
import type { ObjectStore } from '../../storage/objects/index.js';
import { transitionJob } from './jobs.js';
import { asUploadType, NO_DEFECTS } from './status.js';
import { declaredFormat, fileTooLargeMessage, formatOfUpload } from './upload-headers.js';

/** What looking for a job's upload found. */
export type ArrivalOutcome =
  /** The file is there and the job moved to Queued (by this call). */
  | 'queued'
  /** The file is larger than UPLOAD_MAX_BYTES: the job failed and the object was deleted. */
  | 'tooLarge'
  /** No file yet. */
  | 'absent'
  /** The job no longer awaits its upload (another worker or a notification got there first). */
  | 'notAwaiting';

/** A job awaiting its upload, as the watcher and the webhook see it. */
export interface AwaitingUpload {
  id: string;
  object_key: string;
  /** The format asked for with the URL; the PUT's Content-Type may name another. */
  content_type: ContentType | null;
}

// Keys are made by objectKeys.upload: datasets/<datasetId>/uploads/<jobId>.
const UPLOAD_KEY = /^datasets\/[0-9A-Za-z-]{1,64}\/uploads\/([0-9A-Za-z-]{1,64})$/;

/** The job id an upload's object key names, or null for any other key. */
export function jobIdOfUploadKey(key: string): string | null {
  return UPLOAD_KEY.exec(key)?.[1] ?? null;
}

/** Up to `limit` uploadUrl jobs still awaiting their file, oldest first. */
export async function awaitingUploads(db: Kysely<Tables>, limit: number): Promise<AwaitingUpload[]> {
  const rows = await db
    .selectFrom('dataset_jobs')
    .select(['id', 'object_key', 'content_type'])
    .where('status', '=', 'Created')
    .where('job_type', '=', 'uploadUrl')
    // Resumable sessions are driven by the service: their file never appears under object_key.
    .where((w) => w.or([w('upload_type', 'is', null), w('upload_type', '=', 'singlerequest')]))
    .where('object_key', 'is not', null)
    .orderBy('created_at')
    .limit(limit)
    .execute();
  return rows.flatMap((r) =>
    r.object_key === null ? [] : [{ id: r.id, object_key: r.object_key, content_type: r.content_type }],
  );
}

/** The awaiting job whose upload `key` is, or null (unknown key, other job type, not Created). */
export async function awaitingUploadOfKey(db: Kysely<Tables>, key: string): Promise<AwaitingUpload | null> {
  const jobId = jobIdOfUploadKey(key);
  if (jobId === null) return null;
  const row = await db
    .selectFrom('dataset_jobs')
    .select(['id', 'object_key', 'status', 'upload_type', 'content_type'])
    .where('id', '=', jobId)
    .executeTakeFirst();
  if (row === undefined || row.object_key !== key || row.status !== 'Created') return null;
  if (asUploadType(row.upload_type) !== 'singlerequest') return null;
  return { id: row.id, object_key: row.object_key, content_type: row.content_type };
}

/** Looks for the job's file; queues the job when it arrived, fails it when it is too large. */
export async function checkUploadArrival(
  db: Kysely<Tables>,
  objects: ObjectStore,
  job: AwaitingUpload,
  maxBytes: number,
): Promise<ArrivalOutcome> {
  const info = await objects.head(job.object_key);
  if (info === null) return 'absent';
  if (info.size > maxBytes) {
    // A presigned PUT cannot be held to a length up front (see S3ObjectStore.presignPut): the
    // limit is applied here, before any worker reads the file.
    const failed = await transitionJob(
      db,
      { id: job.id },
      {
        move: 'fileRefused',
        by: { kind: 'service' },
        log: { message: fileTooLargeMessage(maxBytes) },
        error: NO_DEFECTS,
      },
    );
    if (failed === undefined) return 'notAwaiting';
    await objects.delete(job.object_key);
    return 'tooLarge';
  }
  // The PUT went to the store, so its Content-Type is only known now; an unknown one cannot be
  // answered 415 any more, and the format asked for with the URL stands.
  let format = declaredFormat(job);
  try {
    format = formatOfUpload(info.contentType, format);
  } catch {
    // keep the declared format
  }
  const queued = await transitionJob(
    db,
    { id: job.id },
    {
      move: 'fileReceived',
      by: { kind: 'service' },
      contentType: format,
      log: { message: `File received (${info.size} bytes, read as ${format}); queued.` },
    },
  );
  return queued !== undefined ? 'queued' : 'notAwaiting';
}
