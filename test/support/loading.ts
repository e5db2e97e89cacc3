// Helpers of the loading tests, on the fixture's own token: ask for an upload URL, PUT a file to
// it as a plain HTTP client does, wait for the job; read every record back through the paging API.
import type { Fixture, JobBody } from './fixture.js';

/** An upload URL as POST /datasets/{id}/uploadUrl answers it. */
export interface UploadUrl {
  url: string;
  jobId: string;
  datasetId: string;
}

export interface UploadOptions {
  mode?: 'create' | 'replace' | 'append' | 'upsert' | 'delete';
  type?: 'resumable';
  contentType?: 'csv' | 'json' | 'tsv';
  dryRun?: boolean;
  maxBadRecords?: number;
  /** Sent as the Idempotency-Key header. */
  idempotencyKey?: string;
}

/** Asks for an upload URL; any answer but 202 throws. */
export async function requestUpload(
  f: Fixture,
  datasetId: string,
  opts: UploadOptions = {},
): Promise<UploadUrl> {
  const query = new URLSearchParams();
  if (opts.mode !== undefined) query.set('mode', opts.mode);
  if (opts.type !== undefined) query.set('type', opts.type);
  if (opts.dryRun !== undefined) query.set('dryRun', String(opts.dryRun));
  if (opts.maxBadRecords !== undefined) query.set('maxBadRecords', String(opts.maxBadRecords));
  const search = query.size > 0 ? `?${query.toString()}` : '';
  const path = `/datasets/${datasetId}/uploadUrl${search}`;
  const body = { contentType: opts.contentType ?? 'csv' };
  const res =
    opts.idempotencyKey === undefined
      ? await f.api<UploadUrl>('POST', path, body)
      : await postWithKey<UploadUrl>(f, path, body, opts.idempotencyKey);
  if (res.status !== 202) throw new Error(`uploadUrl: ${res.status} ${res.text}`);
  return res.json;
}

/** POSTs with an Idempotency-Key header, as a partner's client retrying a request sends it. */
async function postWithKey<T>(f: Fixture, path: string, body: unknown, key: string) {
  const res = await fetch(`${f.baseUrl}/api/v1${path}`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${f.token}`,
      'content-type': 'application/json',
      'idempotency-key': key,
    },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: JSON.parse(text) as T, text };
}

/** PUTs a whole file to an upload URL, as a plain HTTP client does. */
export function putFile(url: string, body: string | Buffer, mediaType = 'text/csv'): Promise<Response> {
  return fetch(url, { method: 'PUT', headers: { 'content-type': mediaType }, body });
}

/** Asks for an upload URL, PUTs `body` to it and waits for the job's end. */
export async function uploadAndWait(
  f: Fixture,
  datasetId: string,
  body: string | Buffer,
  opts: UploadOptions & { mediaType?: string } = {},
): Promise<JobBody> {
  const upload = await requestUpload(f, datasetId, { ...opts, mode: opts.mode ?? 'create' });
  const put = await putFile(upload.url, body, opts.mediaType);
  if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  return f.waitForJob(upload.jobId);
}

/** Every record of a dataset through the paging API. */
export async function allRecords(f: Fixture, datasetId: string, pageSize = 1000): Promise<unknown[]> {
  const out: unknown[] = [];
  let token: string | null = null;
  do {
    const q: string = `pageSize=${pageSize}${token !== null ? `&pageToken=${token}` : ''}`;
    const res = await f.api<{ metadata: { nextPageToken: string | null }; data: unknown[] }>(
      'GET',
      `/datasets/${datasetId}/records?${q}`,
    );
    if (res.status !== 200) throw new Error(`records: ${res.status} ${res.text}`);
    out.push(...res.json.data);
    token = res.json.metadata.nextPageToken;
  } while (token !== null);
  return out;
}
