// Job states, their stable integer codes (documented in docs/loading.md; never renumber), the
// closed sets of a job's columns, and the shapes of a status entry's logData and errorData.
import type { JobStatus, UploadType } from '../../storage/db/tables.js';

// The sets are declared beside the columns that hold them (storage imports nothing from here);
// this is where the rest of the code takes them from.
export {
  CONTENT_TYPES,
  JOB_STATUSES,
  JOB_TYPES,
  LOAD_MODES,
  UPLOAD_TYPES,
  type ContentType,
  type JobStatus,
  type JobType,
  type LoadMode,
  type UploadType,
} from '../../storage/db/tables.js';

/** Status name → stable code. The moves between states are JOB_MOVES (moves.ts). */
export const JOB_STATUS_CODES = {
  Created: 1,
  Queued: 2,
  Running: 3,
  Completed: 4,
  Failed: 5,
  Expired: 6,
} as const satisfies Record<JobStatus, number>;

/** DXAPI's name for each status, sent as `datasetJobStatusName` (docs/api.md, compatibility):
 * DXAPI's clients stop polling at `Completed` or `UnknownError`, so every other end is
 * `UnknownError` there; the entry's `status` keeps the service's own name. */
export const DXAPI_STATUS_NAMES = {
  Created: 'Created',
  Queued: 'Queued',
  Running: 'Running',
  Completed: 'Completed',
  Failed: 'UnknownError',
  Expired: 'UnknownError',
} as const satisfies Record<JobStatus, string>;

/** A status as DXAPI's clients read it. */
export type DxapiStatusName = (typeof DXAPI_STATUS_NAMES)[JobStatus];

/** A stored upload type; null (a recordsLoad job) reads as single-request. */
export function asUploadType(value: UploadType | null): UploadType {
  return value ?? 'singlerequest';
}

/** What a status entry tells about progress. A Running entry, as read, also carries the job's live
 * figures (bytesRead, bytesTotal, rowsRead so far); they are never stored in the entry. */
export interface LogData {
  message: string;
  rowsRead?: number;
  bytesRead?: number;
  bytesTotal?: number | null;
  rowsLoaded?: number;
  duplicatesCollapsed?: number;
  /** Records with defects: left out of a Completed load, or the reason a load Failed. */
  rowsRejected?: number;
  /** append, upsert: records whose key the dataset did not hold (every record without a key). */
  recordsAdded?: number;
  /** upsert: records of the dataset replaced by the file's record of the same key. */
  recordsReplaced?: number;
  /** delete: records of the dataset deleted by a key of the file. */
  recordsDeleted?: number;
  /** delete: distinct keys of the file that matched no record of the dataset (not errors). */
  keysNotFound?: number;
}

/** One defect of a file: the line (1-based, the header is line 1 in CSV) and the property. */
export interface JobError {
  line: number;
  property?: string;
  message: string;
}

/** A file's defects: how many, and the first 100 in line order (all: GET .../errors). */
export interface ErrorData {
  errorCount: number;
  errors: JobError[];
}

/** The errorData of a failure that is not about the file's content. */
export const NO_DEFECTS: ErrorData = { errorCount: 0, errors: [] };
