// The state of an upload URL's job while it awaits its file: the claim of the PUT streaming into it
// (one at a time, renewed while it streams, so a PUT that died with its process frees the URL
// within UPLOAD_CLAIM_MS), a resumable session's progress, and its expiry (with whatever a
// resumable session had persisted). Claim and progress columns change while the job stays Created;
// its status changes only through transitionJob.
import type { Kysely } from 'kysely';
import { madeByGoneProcess, taggedName } from '../../lib/process-tag.js';
import type { DatasetJobRow, Tables } from '../../storage/db/tables.js';
import { objectKeys, type ObjectStore } from '../../storage/objects/index.js';
import type { Db } from '../identity/users.js';
import { transitionJob } from './jobs.js';
import { asUploadType } from './status.js';

/** A claim lapses this long after its last renewal; a streaming PUT renews it every third of it. */
export const UPLOAD_CLAIM_MS = 30_000;

/** A new claim's name: it tells which process holds it (lib/process-tag.ts). */
export const newUploadClaim = taggedName;

/** Claims a Created job for one PUT; false when another PUT holds a live claim on it. A claim held
 * by a process of this host that is gone (killed mid-PUT) is taken over at once, not after it lapses. */
export async function claimUpload(db: Kysely<Tables>, jobId: string, claim: string): Promise<boolean> {
  const now = Date.now();
  const res = await db
    .updateTable('dataset_jobs')
    .set({ upload_claim: claim, upload_claim_expires_at: now + UPLOAD_CLAIM_MS })
    .where('id', '=', jobId)
    .where('status', '=', 'Created')
    .where((w) => w.or([w('upload_claim', 'is', null), w('upload_claim_expires_at', '<', now)]))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) === 1) return true;
  const held = await db
    .selectFrom('dataset_jobs')
    .select('upload_claim')
    .where('id', '=', jobId)
    .executeTakeFirst();
  if (held?.upload_claim == null || !madeByGoneProcess(held.upload_claim)) return false;
  // Only the dead claim is replaced: of two PUTs racing for it, one wins.
  const taken = await db
    .updateTable('dataset_jobs')
    .set({ upload_claim: claim, upload_claim_expires_at: now + UPLOAD_CLAIM_MS })
    .where('id', '=', jobId)
    .where('status', '=', 'Created')
    .where('upload_claim', '=', held.upload_claim)
    .executeTakeFirst();
  return Number(taken.numUpdatedRows) === 1;
}

/** Extends a claim this PUT still holds; false when it was lost (lapsed and taken by another). */
export async function renewUploadClaim(db: Kysely<Tables>, jobId: string, claim: string): Promise<boolean> {
  const res = await db
    .updateTable('dataset_jobs')
    .set({ upload_claim_expires_at: Date.now() + UPLOAD_CLAIM_MS })
    .where('id', '=', jobId)
    .where('upload_claim', '=', claim)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Frees the claim (a PUT that failed, or a slice that was stored) so the URL takes the next PUT. */
export async function releaseUpload(db: Kysely<Tables>, jobId: string, claim: string): Promise<void> {
  await db
    .updateTable('dataset_jobs')
    .set({ upload_claim: null, upload_claim_expires_at: null })
    .where('id', '=', jobId)
    .where('upload_claim', '=', claim)
    .execute();
}

/** Runs `work` while holding a claim, renewing it; frees it afterwards if it is still held. */
export async function withUploadClaim<T>(
  db: Kysely<Tables>,
  jobId: string,
  claim: string,
  work: () => Promise<T>,
): Promise<T> {
  const renewal = setInterval(() => {
    renewUploadClaim(db, jobId, claim).catch(() => undefined);
  }, UPLOAD_CLAIM_MS / 3);
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    await releaseUpload(db, jobId, claim);
  }
}

/** What a stored slice moves on: the persisted length, the session's expiry, and its total and
 * format once they are known. */
export type UploadProgress = Partial<
  Pick<DatasetJobRow, 'content_type' | 'upload_received' | 'upload_total' | 'upload_expires_at'>
>;

/** Records a slice this PUT stored after `from` persisted bytes; false when the session moved on. */
export async function advanceUpload(
  trx: Db,
  jobId: string,
  claim: string,
  from: number,
  progress: UploadProgress,
): Promise<boolean> {
  const res = await trx
    .updateTable('dataset_jobs')
    .set(progress)
    .where('id', '=', jobId)
    .where('status', '=', 'Created')
    .where('upload_claim', '=', claim)
    .where('upload_received', '=', from)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

/** Whether an upload awaiting its file is past its time (`upload_expires_at`: the URL's hour, or a
 * resumable session's idle and overall limits). expireUploads asks the same of the database. */
export function uploadTimeIsUp(job: Pick<DatasetJobRow, 'upload_expires_at'>, now = Date.now()): boolean {
  return Number(job.upload_expires_at ?? 0) < now;
}

/** Marks an unused (or abandoned) upload Expired and deletes what it had persisted; idempotent. */
export async function expireUpload(
  db: Kysely<Tables>,
  objects: ObjectStore,
  job: UploadedFileOf,
): Promise<boolean> {
  const resumable = asUploadType(job.upload_type) === 'resumable';
  const moved = await transitionJob(
    db,
    { id: job.id },
    {
      move: 'uploadExpired',
      by: { kind: 'service' },
      log: {
        message: resumable
          ? 'The resumable upload session expired before the file was complete.'
          : 'The upload URL expired before a file was uploaded.',
      },
    },
  );
  await deleteUploadedFile(objects, job);
  return moved !== undefined;
}

/** Ends Expired every upload still awaiting its file past its time and free of a live claim (a PUT
 * still streaming may finish); returns how many it expired. */
export async function expireUploads(
  { db, objects }: { db: Kysely<Tables>; objects: ObjectStore },
  now: number,
): Promise<number> {
  const due = await db
    .selectFrom('dataset_jobs')
    .select(['id', 'dataset_id', 'object_key', 'upload_type'])
    .where('status', '=', 'Created')
    .where('upload_expires_at', '<', now)
    .where((w) => w.or([w('upload_claim', 'is', null), w('upload_claim_expires_at', '<', now)]))
    .execute();
  let n = 0;
  for (const job of due) {
    // A store that takes uploads itself (presigned PUT) may hold a file that arrived in time but
    // was not noticed yet: the upload watcher queues that job instead.
    if (
      objects.presigned !== null &&
      asUploadType(job.upload_type) === 'singlerequest' &&
      job.object_key !== null &&
      (await objects.head(job.object_key)) !== null
    ) {
      continue;
    }
    if (await expireUpload(db, objects, job)) n++;
  }
  return n;
}

/** What names the file an upload persisted. */
export type UploadedFileOf = Pick<DatasetJobRow, 'id' | 'dataset_id' | 'object_key' | 'upload_type'>;

/** Deletes what an upload persisted: the whole file, or a resumable session's slices. */
export async function deleteUploadedFile(objects: ObjectStore, job: UploadedFileOf): Promise<void> {
  if (asUploadType(job.upload_type) === 'resumable') {
    await objects.deletePrefix(objectKeys.uploadSlices(job.dataset_id, job.id));
  } else if (job.object_key !== null) await objects.delete(job.object_key);
}
