// Job type `recordsLoad`: the file is fetched from the caller's URL, guarded against SSRF.
import { FetchRefused, safeFetch } from '../../../net/safe-fetch.js';
import type { InputFormat } from '../../loading/index.js';
import { JobFailure } from '../load/failure.js';
import { openSourceUrl, sourceUrlKey } from '../source-url.js';
import type { JobTypeModule } from './job-type.js';

/** Fetches the caller's URL (which is never logged: its query is a presigned credential). */
export const recordsLoadJob: JobTypeModule = {
  async open({ job, config, signingSecret, signal }) {
    if (job.source_url === null) throw new JobFailure('The job has no URL to load from.');
    const url = openSourceUrl(sourceUrlKey(signingSecret), job.id, job.source_url);
    if (url === null) {
      throw new JobFailure(
        'The URL to load from cannot be read: the signing secret changed since the job was queued. Request the load again.',
      );
    }
    try {
      const fetched = await safeFetch(url, {
        allowlist: config.loadUrlAllowlist,
        maxBytes: config.uploadMaxBytes,
        signal,
      });
      return {
        body: fetched.body,
        format: sniffFormat(fetched.contentType, url),
        size: fetched.size,
      };
    } catch (err) {
      if (err instanceof FetchRefused) throw new JobFailure(`The URL could not be loaded: ${err.message}.`);
      throw err;
    }
  },
  async cleanup() {},
};

/** The format from the response's media type, else the path's extension, else sniffed by the parser. */
export function sniffFormat(contentType: string | null, url: string): InputFormat {
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type === 'text/csv') return 'csv';
  if (type === 'text/tab-separated-values') return 'tsv';
  if (type === 'application/json' || type === 'application/x-ndjson') return 'json';
  const path = new URL(url).pathname.toLowerCase().replace(/\.gz$/, '');
  if (path.endsWith('.csv')) return 'csv';
  if (path.endsWith('.tsv')) return 'tsv';
  if (path.endsWith('.json') || path.endsWith('.ndjson') || path.endsWith('.jsonl')) return 'json';
  return 'auto';
}
