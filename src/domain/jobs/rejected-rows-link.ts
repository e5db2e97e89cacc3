// The signed link to a job's rejected-rows file. It is made afresh each time a job is read (a
// signature is an HMAC, cheap), valid for an hour, and served by the service itself whatever the
// object store: the file is streamed from the database, never stored.
import { signUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';

/** How long a rejected-rows link stays valid. */
export const REJECTED_ROWS_TTL_SECONDS = 3600;

/** What signing a link needs: the service's public URL and its signing secret. */
export interface LinkSigning {
  publicUrl: string;
  signingSecret: string;
}

/** The path that serves a job's rejected-rows file. */
export const rejectedRowsPath = (jobId: string) => `/rejected-rows/${jobId}`;

/** A signed GET link to the job's rejected-rows file, valid for an hour. */
export function rejectedRowsUrl(signing: LinkSigning, jobId: string): string {
  const expires = nowSeconds() + REJECTED_ROWS_TTL_SECONDS;
  return signUrl(signing.signingSecret, signing.publicUrl, 'GET', rejectedRowsPath(jobId), expires);
}
