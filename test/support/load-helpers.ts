// Helpers of the loading tests: upload a body through an upload URL and wait for its job.
import type { Harness, JobBody } from './load-harness.js';

/** Asks for an upload URL, PUTs `body` to it and waits for the job's end. */
export async function uploadAndWait(
  h: Harness,
  datasetId: string,
  body: string | Buffer,
  opts: { mode?: 'create' | 'replace'; contentType?: 'csv' | 'json' | 'tsv'; mediaType?: string } = {},
): Promise<JobBody> {
  const res = await h.api<{ url: string; jobId: string }>(
    'POST',
    `/datasets/${datasetId}/uploadUrl?mode=${opts.mode ?? 'create'}`,
    { contentType: opts.contentType ?? 'csv' },
  );
  if (res.status !== 202) throw new Error(`uploadUrl: ${res.status} ${res.text}`);
  const put = await fetch(res.json.url, {
    method: 'PUT',
    headers: { 'content-type': opts.mediaType ?? 'text/csv' },
    body,
  });
  if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  return h.waitForJob(res.json.jobId);
}

/** Every record of a dataset through the paging API. */
export async function allRecords(h: Harness, datasetId: string, pageSize = 1000): Promise<unknown[]> {
  const out: unknown[] = [];
  let token: string | null = null;
  do {
    const q: string = `pageSize=${pageSize}${token !== null ? `&pageToken=${token}` : ''}`;
    const res = await h.api<{ metadata: { nextPageToken: string | null }; data: unknown[] }>(
      'GET',
      `/datasets/${datasetId}/records?${q}`,
    );
    if (res.status !== 200) throw new Error(`records: ${res.status} ${res.text}`);
    out.push(...res.json.data);
    token = res.json.metadata.nextPageToken;
  } while (token !== null);
  return out;
}
