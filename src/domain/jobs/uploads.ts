// The state of an upload URL's job while it awaits its file: the claim of the PUT streaming into it
// (one at a time, renewed while it streams, so a PUT that died with its process frees the URL
// within UPLOAD_CLAIM_MS), and its expiry (with whatever a resumable session had persisted).
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../storage/db/tables.js';
import { objectKeys, type ObjectStore } from '../../storage/objects/index.js';
import { transitionJob } from './jobs.js';
import { asUploadType } from './status.js';

/** A claim lapses this long after its last renewal; a streaming PUT renews it every third of it. */
export const UPLOAD_CLAIM_MS = 30_000;

/** Claims a Created job for one PUT; false when another PUT holds a live claim on it. */
export async function claimUpload(db: Kysely<Tables>, jobId: string, claim: string): Promise<boolean> {
  const now = Date.now();
  const res = await db
    .updateTable('dataset_jobs')
    .set({ upload_claim: claim, upload_claim_expires_at: now + UPLOAD_CLAIM_MS })
    .where('id', '=', jobId)
    .where('status', '=', 'Created')
    .where((w) => w.or([w('upload_claim', 'is', null), w('upload_claim_expires_at', '<', now)]))
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
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

/** Marks an unused (or abandoned) upload Expired and deletes what it had persisted; idempotent. */
export async function expireUpload(
  db: Kysely<Tables>,
  objects: ObjectStore,
  job: UploadedFileOf,
): Promise<boolean> {
  const resumable = asUploadType(job.upload_type) === 'resumable';
  const moved = await transitionJob(db, job.id, {
    to: 'Expired',
    from: ['Created'],
    log: {
      message: resumable
        ? 'The resumable upload session expired before the file was complete.'
        : 'The upload URL expired before a file was uploaded.',
    },
    clearLease: true,
  });
  await deleteUploadedFile(objects, job);
  return moved;
}

/** What names the file an upload persisted. */
export type UploadedFileOf = Pick<DatasetJobRow, 'id' | 'dataset_id' | 'object_key' | 'upload_type'>;

/** Deletes what an upload persisted: the whole file, or a resumable session's slices. */
export async function deleteUploadedFile(objects: ObjectStore, job: UploadedFileOf): Promise<void> {
  if (asUploadType(job.upload_type) === 'resumable') {
    await objects.deletePrefix(objectKeys.uploadSlices(job.dataset_id, job.id));
  } else if (job.object_key !== null) await objects.delete(job.object_key);
}
