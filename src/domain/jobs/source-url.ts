// The URL a recordsLoad job fetches is a credential (a presigned query, `user:password@`). The job
// row keeps it sealed (AES-256-GCM, key derived from the signing secret, bound to the job id) only
// while the job may still run, and a shown form without secrets for good: the origin, the path and
// the query's keys. Every end of a job (Completed, Failed, Expired) clears the sealed URL (jobs.ts).
import { deriveKey, isSealed, seal, unseal } from '../../lib/secrets.js';
import { urlWithoutSecrets } from '../../lib/redact.js';

const PURPOSE = 'dx/job-source-url/v1';

/** The key sealing source URLs, derived from the service's signing secret. */
export function sourceUrlKey(signingSecret: string): Buffer {
  return deriveKey(signingSecret, PURPOSE);
}

/** The URL as the job row stores it while the job may run. */
export function sealSourceUrl(key: Buffer, jobId: string, url: string): string {
  return seal(key, url, jobId);
}

/** The URL to fetch, or null when it cannot be read (the signing secret changed since). A value
 * stored before URLs were sealed (migration 012 keeps a queued one as it was) reads as itself. */
export function openSourceUrl(key: Buffer, jobId: string, stored: string): string | null {
  return isSealed(stored) ? unseal(key, stored, jobId) : stored;
}

/** What may be shown and logged of a job's URL (origin, path, query keys). */
export const shownSourceUrl = urlWithoutSecrets;
