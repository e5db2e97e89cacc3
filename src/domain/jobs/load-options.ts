// What a load request may ask besides its mode: a dry run, and how many bad records to tolerate.
// Both are query parameters of uploadUrl and records:load, kept on the job and shown in its view.
import type { DatasetJobRow } from '../../storage/db/tables.js';
import { problem, type FieldErrors } from '../../errors.js';

/** How a job loads its file, besides its mode. */
export interface LoadOptions {
  /** Run the whole load (validation, staging, counts), then drop the result instead of committing. */
  dryRun: boolean;
  /** Records with defects the load may leave out and still complete; more fail the job. */
  maxBadRecords: number;
}

export const DEFAULT_LOAD_OPTIONS: LoadOptions = { dryRun: false, maxBadRecords: 0 };

/** The largest maxBadRecords: a 32-bit integer in every database, and more bad records than a
 * file within any sensible UPLOAD_MAX_BYTES holds rows (so any larger bound would mean the same). */
export const MAX_BAD_RECORDS_LIMIT = 1_000_000_000;

/** The options of a request's query (`dryRun=true|false`, `maxBadRecords=0…`); a 400 problem when bad. */
export function parseLoadOptions(query: { dryRun?: unknown; maxBadRecords?: unknown }): LoadOptions {
  const errors: FieldErrors = {};
  let { dryRun, maxBadRecords } = DEFAULT_LOAD_OPTIONS;
  if (query.dryRun !== undefined) {
    if (query.dryRun === 'true' || query.dryRun === 'false') dryRun = query.dryRun === 'true';
    else errors.dryRun = ['must be true or false'];
  }
  if (query.maxBadRecords !== undefined) {
    const raw = query.maxBadRecords;
    const n = typeof raw === 'string' && /^\d{1,10}$/.test(raw) ? Number(raw) : NaN;
    if (n >= 0 && n <= MAX_BAD_RECORDS_LIMIT) maxBadRecords = n;
    else errors.maxBadRecords = [`must be an integer from 0 to ${MAX_BAD_RECORDS_LIMIT}`];
  }
  if (Object.keys(errors).length > 0) throw problem('invalid', 'The load options are invalid.', { errors });
  return { dryRun, maxBadRecords };
}

/** The options a job was created with. */
export function loadOptionsOf(job: Pick<DatasetJobRow, 'dry_run' | 'max_bad_records'>): LoadOptions {
  return { dryRun: job.dry_run === 1, maxBadRecords: job.max_bad_records };
}
