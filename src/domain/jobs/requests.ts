// The two ways to start a load: an upload URL to PUT a file to, or a URL the service fetches.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tables } from '../../storage/db/tables.js';
import { objectKeys, type ObjectStore } from '../../storage/objects/index.js';
import { problem } from '../../errors.js';
import { signUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';
import { datasetSchemaOf, findVisibleDataset, type DatasetReader } from '../datasets/datasets.js';
import { createJob } from './jobs.js';
import { sealSourceUrl, shownSourceUrl } from './source-url.js';
import { checkModeOnRequest } from './load-modes.js';
import type { LoadOptions } from './load-options.js';
import type { ContentType, LoadMode, UploadType } from './status.js';

/** How long an upload URL (and its Created job) stays usable. */
export const UPLOAD_URL_TTL_SECONDS = 3600;

/** What a load request answers: the dataset, the URL (to PUT the file to, or the one given) and the job. */
export interface UploadJobResult {
  datasetId: string;
  url: string;
  jobId: string;
}

/** The path of the embedded store's upload receiver for a job. */
export const uploadPath = (jobId: string) => `/uploads/${jobId}`;

/** The dataset to load into, if the caller may see it and the mode allows loading it now. */
async function datasetFor(db: Kysely<Tables>, caller: DatasetReader, datasetId: string, mode: LoadMode) {
  const ds = await findVisibleDataset(db, caller, datasetId);
  const { primaryKey } = await datasetSchemaOf(db, ds.id);
  checkModeOnRequest(mode, { record_count: ds.record_count, primaryKey });
  return ds;
}

/** Who asks for a load: an installation (the API; appId set), or a member of the workspace in the
 * console (appId null, every dataset of the workspace; no installation). */
export type LoadCaller = DatasetReader & { ownerUserId: number; installationId?: number; requestId?: string };

/** What an uploadUrl job is created with. */
export interface UploadJobInput {
  datasetId: string;
  mode: LoadMode;
  options: LoadOptions;
  contentType: ContentType;
  uploadType: UploadType;
  /** The first status entry's message, when not the API's "Awaiting the upload." (the console's
   * names the file it was given). */
  message?: string;
}

/**
 * Creates an uploadUrl job (Created, awaiting its file at `objectKey` until `expiresAt`, epoch
 * seconds): the one way both the API's upload URL and the console's file form make a load.
 */
export async function createUploadJob(
  db: Kysely<Tables>,
  caller: LoadCaller,
  input: UploadJobInput,
): Promise<{ datasetId: string; jobId: string; objectKey: string; expiresAt: number }> {
  const ds = await datasetFor(db, caller, input.datasetId, input.mode);
  const expiresAt = nowSeconds() + UPLOAD_URL_TTL_SECONDS;
  const jobId = randomUUID();
  const objectKey = objectKeys.upload(ds.id, jobId);
  await createJob(db, {
    id: jobId,
    datasetId: ds.id,
    workspaceId: ds.workspace_id,
    createdByUserId: caller.ownerUserId,
    ...(caller.installationId !== undefined ? { installationId: caller.installationId } : {}),
    ...(caller.requestId !== undefined ? { requestId: caller.requestId } : {}),
    jobType: 'uploadUrl',
    mode: input.mode,
    options: input.options,
    contentType: input.contentType,
    objectKey,
    // The signed URL counts seconds, the job's column milliseconds.
    uploadExpiresAt: expiresAt * 1000,
    uploadType: input.uploadType,
    status: 'Created',
    message:
      input.message ??
      (input.uploadType === 'resumable'
        ? 'Awaiting the upload (resumable session).'
        : 'Awaiting the upload.'),
  });
  return { datasetId: ds.id, jobId, objectKey, expiresAt };
}

/** Creates an uploadUrl job (Created, awaiting the file) and its URL, valid for one hour. */
export async function requestUploadUrl(
  db: Kysely<Tables>,
  caller: LoadCaller,
  input: UploadJobInput,
  store: { objects: ObjectStore; publicUrl: string; signingSecret: string },
): Promise<UploadJobResult> {
  const { datasetId, jobId, objectKey, expiresAt } = await createUploadJob(db, caller, input);
  // A resumable session is driven by the service whatever the store: the URL is always its own,
  // and is the session URI already (the client sends no start request).
  const presigned = input.uploadType === 'singlerequest' ? store.objects.presigned : null;
  const url =
    presigned !== null
      ? (await presigned.put(objectKey, { expiresInSeconds: UPLOAD_URL_TTL_SECONDS })).url
      : signUrl(store.signingSecret, store.publicUrl, 'PUT', uploadPath(jobId), expiresAt);
  return { datasetId, url, jobId };
}

/** Creates a recordsLoad job (Queued) for a caller's http(s) URL. */
export async function requestRecordsLoad(
  db: Kysely<Tables>,
  caller: LoadCaller,
  input: { datasetId: string; mode: LoadMode; options: LoadOptions; url: string },
  /** The key sealing the URL on the job row (sourceUrlKey). */
  sourceUrlKey: Buffer,
): Promise<UploadJobResult> {
  let parsed: URL | null = null;
  try {
    parsed = new URL(input.url);
  } catch {
    parsed = null;
  }
  if (parsed === null || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
    throw problem('invalid', 'The url must be an http(s) URL.', {
      errors: { url: ['must be an http(s) URL'] },
    });
  }
  const ds = await datasetFor(db, caller, input.datasetId, input.mode);
  const jobId = randomUUID();
  const job = await createJob(db, {
    id: jobId,
    datasetId: ds.id,
    workspaceId: ds.workspace_id,
    createdByUserId: caller.ownerUserId,
    ...(caller.installationId !== undefined ? { installationId: caller.installationId } : {}),
    ...(caller.requestId !== undefined ? { requestId: caller.requestId } : {}),
    jobType: 'recordsLoad',
    mode: input.mode,
    options: input.options,
    contentType: null,
    sourceUrl: sealSourceUrl(sourceUrlKey, jobId, input.url),
    sourceShown: shownSourceUrl(input.url),
    status: 'Queued',
    message: 'Queued.',
  });
  return { datasetId: ds.id, url: input.url, jobId: job.id };
}
