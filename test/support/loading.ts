// Helpers of the loading tests, on the fixture's own token: upload a body through an upload URL
// and wait for its job; read every record back through the paging API.
import type { Fixture, JobBody } from './fixture.js';

/** Asks for an upload URL, PUTs `body` to it and waits for the job's end. */
export async function uploadAndWait(
  f: Fixture,
  datasetId: string,
  body: string | Buffer,
  opts: { mode?: 'create' | 'replace'; contentType?: 'csv' | 'json' | 'tsv'; mediaType?: string } = {},
): Promise<JobBody> {
  const res = await f.api<{ url: string; jobId: string }>(
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
  return f.waitForJob(res.json.jobId);
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
