// The embedded store's side of an upload URL: one PUT per URL. While a PUT streams, the Created job
// carries a short claim (in its lease columns) so a second PUT to the same URL is refused; once
// the file is stored the job moves to Queued, after which the URL answers 409.
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { transitionJob } from './jobs.js';

/** A PUT that dies without a word frees its claim after this long. */
const UPLOAD_CLAIM_MS = 15 * 60 * 1000;

/** Claims the job of an upload URL for one PUT, or throws the problem to answer. */
export async function claimUpload(db: Kysely<Tables>, jobId: string, claim: string): Promise<DatasetJobRow> {
  const job = await db.selectFrom('dataset_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
  if (job === undefined || job.job_type !== 'uploadUrl')
    throw problem('notFound', 'No upload is expected here.');
  if (job.status === 'Expired' || (job.status === 'Created' && (job.upload_expires_at ?? 0) < Date.now())) {
    await expireUpload(db, jobId);
    throw problem('forbidden', 'The upload URL has expired; ask for a new one.');
  }
  if (job.status !== 'Created') throw problem('conflict', 'This upload URL was already used.');
  const now = Date.now();
  const res = await db
    .updateTable('dataset_jobs')
    .set({ lease_owner: claim, lease_expires_at: now + UPLOAD_CLAIM_MS })
    .where('id', '=', jobId)
    .where('status', '=', 'Created')
    .where((w) => w.or([w('lease_owner', 'is', null), w('lease_expires_at', '<', now)]))
    .executeTakeFirst();
  if (Number(res.numUpdatedRows) !== 1)
    throw problem('conflict', 'A file is already being uploaded to this URL.');
  return job;
}

/** Frees the claim after a failed PUT so the URL can be used again. */
export async function releaseUpload(db: Kysely<Tables>, jobId: string, claim: string): Promise<void> {
  await db
    .updateTable('dataset_jobs')
    .set({ lease_owner: null, lease_expires_at: null })
    .where('id', '=', jobId)
    .where('lease_owner', '=', claim)
    .where('status', '=', 'Created')
    .execute();
}

/** The file is stored: the job is queued for a worker. False when the claim was lost meanwhile. */
export async function queueUpload(db: Kysely<Tables>, jobId: string, claim: string, bytes: number) {
  return transitionJob(db, jobId, {
    to: 'Queued',
    from: ['Created'],
    leaseOwner: claim,
    log: { message: `File received (${bytes} bytes); queued.` },
    clearLease: true,
  });
}

/** Marks an unused upload's job Expired (idempotent). */
export async function expireUpload(db: Kysely<Tables>, jobId: string): Promise<void> {
  await transitionJob(db, jobId, {
    to: 'Expired',
    from: ['Created'],
    log: { message: 'The upload URL expired before a file was uploaded.' },
    clearLease: true,
  });
}
