// Job states, their stable integer codes (documented in docs/jobs.md; never renumber), and the
// shapes of a status entry's logData and errorData.

/** Status name → stable code. Created → Queued → Running → Completed | Failed; Created → Expired. */
export const JOB_STATUS_CODES = {
  Created: 1,
  Queued: 2,
  Running: 3,
  Completed: 4,
  Failed: 5,
  Expired: 6,
} as const;
export type JobStatus = keyof typeof JOB_STATUS_CODES;

/** States a job never leaves. */
export const FINAL_STATUSES: readonly JobStatus[] = ['Completed', 'Failed', 'Expired'];

export const JOB_TYPES = ['uploadUrl', 'recordsLoad'] as const;
export type JobType = (typeof JOB_TYPES)[number];

export const LOAD_MODES = ['create', 'replace'] as const;
export type LoadMode = (typeof LOAD_MODES)[number];

export const CONTENT_TYPES = ['csv', 'json', 'tsv'] as const;
export type ContentType = (typeof CONTENT_TYPES)[number];

/** Narrows a stored content type. */
export function asContentType(value: string): ContentType {
  if ((CONTENT_TYPES as readonly string[]).includes(value)) return value as ContentType;
  throw new Error(`unknown content type ${value}`);
}

/** How an upload URL takes its file: one PUT, or a resumable session of slices (GCS semantics). */
export const UPLOAD_TYPES = ['singlerequest', 'resumable'] as const;
export type UploadType = (typeof UPLOAD_TYPES)[number];

/** Narrows a stored upload type (rows from before resumable uploads read as single-request). */
export function asUploadType(value: string | null): UploadType {
  if (value === null || value === 'singlerequest') return 'singlerequest';
  if (value === 'resumable') return value;
  throw new Error(`unknown upload type ${value}`);
}

/** What a status entry tells about progress. */
export interface LogData {
  message: string;
  rowsRead?: number;
  rowsLoaded?: number;
  duplicatesCollapsed?: number;
}

/** One defect of a file: the line (1-based, the header is line 1 in CSV) and the property. */
export interface JobError {
  line: number;
  property?: string;
  message: string;
}

/** Why a job failed: the number of defects and the first 100 of them. */
export interface ErrorData {
  errorCount: number;
  errors: JobError[];
}

/** Narrows a stored status name. */
export function asJobStatus(value: string): JobStatus {
  if (value in JOB_STATUS_CODES) return value as JobStatus;
  throw new Error(`unknown job status ${value}`);
}
