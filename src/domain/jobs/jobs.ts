// Creating load jobs, moving them between states (each move writes a status entry in the same
// transaction), and reading them with the same visibility as their datasets.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DatasetJobRow, Tables } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import type { Db } from '../identity/users.js';
import { findVisibleDataset, type DatasetCaller } from '../datasets/datasets.js';
import {
  JOB_STATUS_CODES,
  type ContentType,
  type ErrorData,
  type JobStatus,
  type JobType,
  type LoadMode,
  type LogData,
  type UploadType,
} from './status.js';
import { viewJobs, viewStatusEntry, type Job, type JobStatusEntry } from './view.js';

export interface NewJob {
  /** Chosen by the caller when the id must be known first (it is part of the object key). */
  id?: string;
  datasetId: string;
  workspaceId: number;
  createdByUserId: number;
  jobType: JobType;
  mode: LoadMode;
  contentType: ContentType | null;
  sourceUrl?: string;
  objectKey?: string;
  uploadExpiresAt?: number;
  uploadType?: UploadType;
  status: Extract<JobStatus, 'Created' | 'Queued'>;
  message: string;
}

/** Inserts a job with its first status entry. */
export async function createJob(db: Kysely<Tables>, input: NewJob): Promise<DatasetJobRow> {
  const id = input.id ?? randomUUID();
  const now = nowTimestamp();
  return db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('dataset_jobs')
      .values({
        id,
        dataset_id: input.datasetId,
        workspace_id: input.workspaceId,
        job_type: input.jobType,
        mode: input.mode,
        content_type: input.contentType,
        source_url: input.sourceUrl ?? null,
        object_key: input.objectKey ?? null,
        status: input.status,
        lease_owner: null,
        lease_expires_at: null,
        attempts: 0,
        created_at: now,
        updated_at: now,
        created_by_user_id: input.createdByUserId,
        upload_expires_at: input.uploadExpiresAt ?? null,
        upload_type: input.uploadType ?? null,
        upload_received: input.uploadType === 'resumable' ? 0 : null,
        upload_total: null,
        upload_claim: null,
        upload_claim_expires_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendStatus(trx, id, input.status, { message: input.message }, null, now);
    return row;
  });
}

export interface Transition {
  to: JobStatus;
  /** The move happens only from one of these states. */
  from: readonly JobStatus[];
  /** When set, only while this worker holds the lease. */
  leaseOwner?: string;
  /** When set, only while this PUT holds the upload's claim. */
  uploadClaim?: string;
  /** Columns written with the move (the format an upload was read as, its size). */
  also?: JobColumns;
  log: LogData;
  error?: ErrorData | null;
  /** Clears the lease (final states, release at shutdown). */
  clearLease?: boolean;
}

/** Job columns a transition may write besides the status. */
export type JobColumns = Partial<
  Pick<DatasetJobRow, 'content_type' | 'upload_received' | 'upload_total' | 'upload_expires_at'>
>;

/** Moves a job to another state if it is in one of `from`; returns false when it was not. */
export async function transitionJob(db: Kysely<Tables>, jobId: string, t: Transition): Promise<boolean> {
  return db.transaction().execute((trx) => transitionJobIn(trx, jobId, t));
}

/** transitionJob inside the caller's transaction (the records swap commits with the job). */
export async function transitionJobIn(trx: Db, jobId: string, t: Transition): Promise<boolean> {
  const now = nowTimestamp();
  let q = trx
    .updateTable('dataset_jobs')
    .set({
      ...t.also,
      status: t.to,
      updated_at: now,
      ...(t.clearLease === true ? { lease_owner: null, lease_expires_at: null } : {}),
      // Only a job awaiting its file can be claimed by a PUT: every move ends the claim.
      upload_claim: null,
      upload_claim_expires_at: null,
    })
    .where('id', '=', jobId)
    .where('status', 'in', [...t.from]);
  if (t.leaseOwner !== undefined) q = q.where('lease_owner', '=', t.leaseOwner);
  if (t.uploadClaim !== undefined) q = q.where('upload_claim', '=', t.uploadClaim);
  const result = await q.executeTakeFirst();
  if (Number(result.numUpdatedRows) !== 1) return false;
  await appendStatus(trx, jobId, t.to, t.log, t.error ?? null, now);
  return true;
}

/** Writes a status entry (also used for progress entries of a running job). */
export async function appendStatus(
  db: Db,
  jobId: string,
  status: JobStatus,
  log: LogData,
  error: ErrorData | null,
  now = nowTimestamp(),
): Promise<void> {
  await db
    .insertInto('dataset_job_logs')
    .values({
      job_id: jobId,
      status_code: JOB_STATUS_CODES[status],
      status_name: status,
      log_data: JSON.stringify(log),
      error_data: error === null ? null : JSON.stringify(error),
      created_at: now,
    })
    .execute();
}

/** The row of a job whose dataset the caller may see, or a 404 problem. */
export async function findVisibleJob(db: Db, caller: DatasetCaller, jobId: string): Promise<DatasetJobRow> {
  const row = await db.selectFrom('dataset_jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
  const notFound = problem('notFound', `Job ${jobId} not found.`);
  if (row === undefined) throw notFound;
  try {
    await findVisibleDataset(db, caller, row.dataset_id);
  } catch {
    throw notFound;
  }
  return row;
}

/** One job in the public shape. */
export async function getJob(db: Db, caller: DatasetCaller, jobId: string): Promise<Job> {
  const [job] = await viewJobs(db, [await findVisibleJob(db, caller, jobId)]);
  if (job === undefined) throw problem('notFound', `Job ${jobId} not found.`);
  return job;
}

/** Every status entry of a job, oldest first. */
export async function jobLogs(db: Db, caller: DatasetCaller, jobId: string): Promise<JobStatusEntry[]> {
  await findVisibleJob(db, caller, jobId);
  const rows = await db
    .selectFrom('dataset_job_logs')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('id')
    .execute();
  return rows.map(viewStatusEntry);
}

/** The jobs of a dataset the caller may see, newest first. */
export async function listDatasetJobs(db: Db, caller: DatasetCaller, datasetId: string): Promise<Job[]> {
  await findVisibleDataset(db, caller, datasetId);
  const rows = await db
    .selectFrom('dataset_jobs')
    .selectAll()
    .where('dataset_id', '=', datasetId)
    .orderBy('created_at', 'desc')
    .orderBy('id')
    .execute();
  return viewJobs(db, rows);
}
