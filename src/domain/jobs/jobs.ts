// Creating load jobs, moving them between states, and reading them with the same visibility as
// their datasets. transitionJob is the only writer of a job's status: it makes one of JOB_MOVES
// (moves.ts) and writes the move's status entry in the same transaction.
import { randomUUID } from 'node:crypto';
import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely';
import type { DatasetJobRow, Tables } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import type { Db } from '../identity/users.js';
import { findVisibleDataset, visibleTo, type DatasetReader } from '../datasets/datasets.js';
import { encodePageToken, parsePageSize, timeAndIdAfter } from '../records/query.js';
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
import { DEFAULT_LOAD_OPTIONS, type LoadOptions } from './load-options.js';
import { JOB_MOVES, type JobMove, type Mover, type MoverOf, type MoveRule, type TargetOf } from './moves.js';
import type { LinkSigning } from './rejected-rows-link.js';
import { viewJobs, viewStatusEntry, withLiveProgress, type Job, type JobStatusEntry } from './view.js';
import { progressOf } from './load/progress.js';
import { emitJobEvent, EVENT_OF_MOVE, type JobEvent } from './lifecycle.js';
import { enqueueJobEvent } from '../webhooks/outbox.js';

export interface NewJob {
  /** Chosen by the caller when the id must be known first (it is part of the object key). */
  id?: string;
  datasetId: string;
  workspaceId: number;
  createdByUserId: number;
  /** The installation whose access token asks for the job; its app gets the job's webhook events. */
  installationId?: number;
  /** The id of the API request that asks for the job (its lifecycle lines carry it). */
  requestId?: string;
  jobType: JobType;
  mode: LoadMode;
  /** Dry run and tolerated bad records; the defaults (a real load, none tolerated) when left out. */
  options?: LoadOptions;
  contentType: ContentType | null;
  /** recordsLoad: the URL sealed for the job (source-url.ts), and its shown form. */
  sourceUrl?: string;
  sourceShown?: string;
  objectKey?: string;
  uploadExpiresAt?: number;
  uploadType?: UploadType;
  status: Extract<JobStatus, 'Created' | 'Queued'>;
  message: string;
}

/** Inserts a job with its first status entry. */
export async function createJob(db: Kysely<Tables>, input: NewJob): Promise<DatasetJobRow> {
  const id = input.id ?? randomUUID();
  const options = input.options ?? DEFAULT_LOAD_OPTIONS;
  const now = nowTimestamp();
  const job = await db.transaction().execute(async (trx) => {
    const row = await trx
      .insertInto('dataset_jobs')
      .values({
        id,
        dataset_id: input.datasetId,
        workspace_id: input.workspaceId,
        job_type: input.jobType,
        mode: input.mode,
        dry_run: options.dryRun ? 1 : 0,
        max_bad_records: options.maxBadRecords,
        content_type: input.contentType,
        source_url: input.sourceUrl ?? null,
        source_shown: input.sourceShown ?? null,
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
        installation_id: input.installationId ?? null,
        request_id: input.requestId ?? null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    await appendStatus(trx, id, input.status, { message: input.message }, null, now);
    return row;
  });
  const created = { job, status: input.status, log: { message: input.message }, error: null };
  emitJobEvent(db, { event: 'created', ...created });
  if (input.status === 'Queued') emitJobEvent(db, { event: 'queued', ...created });
  return job;
}

/** The job a move applies to: one named job, or (a claim) the oldest one the move admits. */
export type JobTarget =
  | { id: string }
  | {
      oldest: {
        /** Narrows the jobs the move admits (the attempts a claim looks for). */
        where: (eb: ExpressionBuilder<Tables, 'dataset_jobs'>) => Expression<SqlBool>;
        /** Passes over rows other claimers hold (Database.capabilities.skipLocked). */
        skipLocked: boolean;
      };
    };

/** One move of a job (JOB_MOVES) and what its status entry says. */
export type Transition<M extends JobMove> = {
  move: M;
  by: MoverOf<M>;
  /** The entry's logData; a function of the moved job when it depends on it (the attempt). */
  log: LogData | ((job: DatasetJobRow) => LogData);
  /** fileReceived: the format the file will be read as. */
  contentType?: ContentType;
} & (TargetOf<M> extends 'Failed'
  ? { error: ErrorData }
  : // A load that left bad records out completes with them.
    TargetOf<M> extends 'Completed'
    ? { error?: ErrorData }
    : { error?: never });

/** Moves a job if its state and mover admit the move; returns the moved job, or undefined. */
export async function transitionJob<M extends JobMove>(
  db: Kysely<Tables>,
  target: JobTarget,
  t: Transition<M>,
): Promise<DatasetJobRow | undefined> {
  const moved = await db.transaction().execute((trx) => moveJob(trx, target, t));
  if (moved === undefined) return undefined;
  emitJobEvent(db, moved); // once committed
  return moved.job;
}

/** transitionJob inside the caller's transaction (the records swap commits with the job). The
 * UPDATE is the first statement of a claim's transaction, so SQLite takes its write lock at once.
 * The event is told at the move: the callers end their transaction with it. */
export async function transitionJobIn<M extends JobMove>(
  trx: Db,
  target: JobTarget,
  t: Transition<M>,
): Promise<DatasetJobRow | undefined> {
  const moved = await moveJob(trx, target, t);
  if (moved === undefined) return undefined;
  emitJobEvent(trx, moved);
  return moved.job;
}

/** Makes the move and writes its status entry and, for a final state, its webhook delivery. */
async function moveJob<M extends JobMove>(
  trx: Db,
  target: JobTarget,
  t: Transition<M>,
): Promise<JobEvent | undefined> {
  const rule: MoveRule = JOB_MOVES[t.move];
  const by: Mover = t.by;
  const now = Date.now();
  const stamp = nowTimestamp();
  const admits = (eb: ExpressionBuilder<Tables, 'dataset_jobs'>) =>
    eb.and([eb('status', 'in', [...rule.from]), ...moverGuard(eb, by, now)]);
  let q = trx
    .updateTable('dataset_jobs')
    .set((eb) => ({
      status: rule.to,
      updated_at: stamp,
      ...leaseAfter(rule.to, by, now),
      // A claim starts an attempt from scratch: no figures until its worker opened the file.
      ...(by.kind === 'claimer' ? { attempts: eb('attempts', '+', 1), ...NO_PROGRESS } : {}),
      ...(t.contentType !== undefined ? { content_type: t.contentType } : {}),
      upload_claim: null,
      upload_claim_expires_at: null,
      // The URL a job fetches is a credential: kept only while the job may still need it.
      ...(KEEPS_SOURCE_URL[rule.to] ? {} : { source_url: null }),
    }))
    .where(admits);
  if ('id' in target) {
    q = q.where('id', '=', target.id);
  } else {
    const { where, skipLocked } = target.oldest;
    q = q.where('id', '=', (eb) =>
      eb
        .selectFrom('dataset_jobs')
        .select('id')
        .where(admits)
        .where(where)
        .orderBy('created_at')
        .limit(1)
        .$if(skipLocked, (qb) => qb.forUpdate().skipLocked()),
    );
  }
  const job = await q.returningAll().executeTakeFirst();
  if (job === undefined) return undefined;
  const log = typeof t.log === 'function' ? t.log(job) : t.log;
  await appendStatus(trx, job.id, rule.to, log, t.error ?? null, stamp);
  await enqueueJobEvent(trx, job, rule.to, stamp);
  return { event: EVENT_OF_MOVE[t.move], job, status: rule.to, log, error: t.error ?? null };
}

/** The progress columns of a job no worker has figures for yet. */
const NO_PROGRESS = {
  progress_bytes: null,
  progress_total_bytes: null,
  progress_rows: null,
  progress_at: null,
} as const;

/** The states in which a job may still fetch its URL; the others clear it (source-url.ts). */
const KEEPS_SOURCE_URL: Record<JobStatus, boolean> = {
  Created: true,
  Queued: true,
  Running: true,
  Completed: false,
  Failed: false,
  Expired: false,
};

/** What the mover must hold for the move, besides the job's state. */
function moverGuard(
  eb: ExpressionBuilder<Tables, 'dataset_jobs'>,
  by: Mover,
  now: number,
): Expression<SqlBool>[] {
  switch (by.kind) {
    case 'leaseHolder':
      return [eb('lease_owner', '=', by.owner)];
    case 'claimer':
      // A Running job is taken over only once its worker let the lease lapse.
      return [eb.or([eb('status', '!=', 'Running'), eb('lease_expires_at', '<', now)])];
    case 'uploadClaimHolder':
      return [eb('upload_claim', '=', by.claim)];
    case 'service':
      return [];
  }
}

/** A job holds a lease exactly while Running: the claimer's, until now + its lease time. */
function leaseAfter(to: JobStatus, by: Mover, now: number) {
  if (to !== 'Running') return { lease_owner: null, lease_expires_at: null };
  if (by.kind !== 'claimer') throw new Error('only a claim moves a job to Running');
  return { lease_owner: by.owner, lease_expires_at: now + by.leaseMs };
}

/** Writes a status entry: the job's first, or the one of a move. */
async function appendStatus(
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
export async function findVisibleJob(db: Db, caller: DatasetReader, jobId: string): Promise<DatasetJobRow> {
  // A job of a dataset the caller does not see is not found either: one query for both.
  const row = await db
    .selectFrom('dataset_jobs as j')
    .innerJoin('datasets as d', 'd.id', 'j.dataset_id')
    .selectAll('j')
    .where('j.id', '=', jobId)
    .where(visibleTo(caller))
    .executeTakeFirst();
  if (row === undefined) throw problem('notFound', `Job ${jobId} not found.`, { code: 'job_not_found' });
  return row;
}

/** One job in the public shape. */
export async function getJob(
  db: Db,
  caller: DatasetReader,
  jobId: string,
  signing: LinkSigning,
): Promise<Job> {
  const [job] = await viewJobs(db, [await findVisibleJob(db, caller, jobId)], signing);
  if (job === undefined) throw problem('notFound', `Job ${jobId} not found.`, { code: 'job_not_found' });
  return job;
}

/** Every status entry of a job, oldest first. */
export async function jobLogs(db: Db, caller: DatasetReader, jobId: string): Promise<JobStatusEntry[]> {
  await findVisibleJob(db, caller, jobId);
  const rows = await db
    .selectFrom('dataset_job_logs')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('id')
    .execute();
  return rows.map(viewStatusEntry);
}

/** The current status entry of a job; while it runs, with the live figures of its progress. */
export async function currentJobStatus(
  db: Db,
  caller: DatasetReader,
  jobId: string,
): Promise<JobStatusEntry> {
  const job = await findVisibleJob(db, caller, jobId);
  const row = await db
    .selectFrom('dataset_job_logs')
    .selectAll()
    .where('job_id', '=', jobId)
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  if (row === undefined) throw problem('notFound', `Job ${jobId} has no status.`, { code: 'job_not_found' });
  return withLiveProgress(viewStatusEntry(row), progressOf(job));
}

/** A page of a dataset's jobs as GET /datasets/:id/jobs answers it. */
export interface JobsPage {
  metadata: { count: number; nextPageToken: string | null };
  data: Job[];
}

/** One page of the jobs of a dataset the caller may see, newest first (newestJobs). */
export async function listDatasetJobs(
  db: Db,
  caller: DatasetReader,
  datasetId: string,
  signing: LinkSigning,
  query: { pageSize?: unknown; pageToken?: unknown } = {},
): Promise<JobsPage> {
  const pageSize = parsePageSize(query.pageSize);
  const after = timeAndIdAfter(query.pageToken);
  await findVisibleDataset(db, caller, datasetId);
  const page = await newestJobs(db, (eb) => eb('dataset_id', '=', datasetId), pageSize, after);
  return { metadata: page.metadata, data: await viewJobs(db, page.rows, signing) };
}

/** One page of every job of a workspace's datasets, newest first, of one status or of any
 * (`status` null), paged as listDatasetJobs pages one dataset's; with each dataset's name. */
export async function listWorkspaceJobs(
  db: Db,
  workspaceId: number,
  signing: LinkSigning,
  query: { status: JobStatus | null; pageSize: number; pageToken?: unknown },
): Promise<JobsPage & { datasetNames: Map<string, string> }> {
  const page = await newestJobs(
    db,
    (eb) =>
      eb.and([
        eb('workspace_id', '=', workspaceId),
        ...(query.status !== null ? [eb('status', '=', query.status)] : []),
      ]),
    query.pageSize,
    timeAndIdAfter(query.pageToken),
  );
  const shown = page.rows;
  const datasetIds = [...new Set(shown.map((r) => r.dataset_id))];
  const names =
    datasetIds.length > 0
      ? await db.selectFrom('datasets').select(['id', 'name']).where('id', 'in', datasetIds).execute()
      : [];
  return {
    metadata: page.metadata,
    data: await viewJobs(db, shown, signing),
    datasetNames: new Map(names.map((d) => [d.id, d.name])),
  };
}

/** The jobs `which` picks, newest first (created_at, then id, both descending: a page token holds
 * the last job's pair, so jobs created meanwhile never shift a page), a page after `after`. */
async function newestJobs(
  db: Db,
  which: (eb: ExpressionBuilder<Tables, 'dataset_jobs'>) => Expression<SqlBool>,
  pageSize: number,
  after: ReturnType<typeof timeAndIdAfter>,
): Promise<{ rows: DatasetJobRow[]; metadata: JobsPage['metadata'] }> {
  const rows = await db
    .selectFrom('dataset_jobs')
    .selectAll()
    .where(which)
    .$if(after !== null, (qb) =>
      qb.where((eb) => {
        const [c, id] = after as [string, string];
        return eb.or([eb('created_at', '<', c), eb.and([eb('created_at', '=', c), eb('id', '<', id)])]);
      }),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(pageSize + 1)
    .execute();
  const more = rows.length > pageSize;
  const shown = more ? rows.slice(0, pageSize) : rows;
  const last = shown.at(-1);
  const nextPageToken =
    more && last !== undefined ? encodePageToken({ g: 0, k: [last.created_at, last.id] }) : null;
  return { rows: shown, metadata: { count: shown.length, nextPageToken } };
}
