// Jobs in the public shape (docs/loading.md): the public record's fields with our figures inside.
import type { DatasetJobLogRow, DatasetJobRow } from '../../storage/db/tables.js';
import type { Db, UserSummary } from '../identity/users.js';
import { summariesOf } from '../identity/summaries.js';
import type { WorkspaceSummary } from '../identity/workspaces.js';
import { loadOptionsOf } from './load-options.js';
import { rejectedRowsUrl, type LinkSigning } from './rejected-rows-link.js';
import {
  asUploadType,
  DXAPI_STATUS_NAMES,
  type ContentType,
  type DxapiStatusName,
  type ErrorData,
  type JobStatus,
  type JobType,
  type LoadMode,
  type LogData,
  type UploadType,
} from './status.js';
import { progressOf, type JobProgress } from './load/progress.js';

/** A status entry of a job. */
export interface JobStatusEntry {
  datasetJobLogId: number;
  datasetJobStatusCode: number;
  /** DXAPI's name: `UnknownError` for an unsuccessful end (DXAPI_STATUS_NAMES). */
  datasetJobStatusName: DxapiStatusName;
  /** The service's own status name. */
  status: JobStatus;
  logData: LogData | null;
  errorData: ErrorData | null;
  dateCreated: string;
}

/** A job as GET /datasets/jobs/:jobId answers it. */
export interface Job {
  datasetJobId: string;
  datasetId: string;
  workspace: WorkspaceSummary;
  dateCreated: string;
  createdBy: UserSummary;
  jobType: JobType;
  currentStatus: JobStatusEntry;
  /** DXAPI's job tree, as DXAPI shows a job of its own: no parent, no children, and so every
   * child succeeded. */
  datasetParentJobId: null;
  children: [];
  allChildrenSucceeded: true;
  mode: LoadMode;
  /** The format the file was (or will be) read as. */
  contentType: ContentType | null;
  /** uploadUrl jobs: one PUT or a resumable session; null for recordsLoad. */
  uploadType: UploadType | null;
  /** What the worker has read so far (the final figures once the job ended); null before it runs. */
  progress: JobProgress | null;
  /** The load reports what it would do and changes nothing. */
  dryRun: boolean;
  /** Records with defects the load may leave out and still complete. */
  maxBadRecords: number;
  /** Once the job ended with defects: a signed link (1 hour) to the rejected-rows CSV. */
  rejectedRowsUrl: string | null;
}

/** A log row in the public shape. */
export function viewStatusEntry(row: DatasetJobLogRow): JobStatusEntry {
  return {
    datasetJobLogId: Number(row.id),
    datasetJobStatusCode: Number(row.status_code),
    datasetJobStatusName: DXAPI_STATUS_NAMES[row.status_name],
    status: row.status_name,
    logData: row.log_data === null ? null : (JSON.parse(row.log_data) as LogData),
    errorData: row.error_data === null ? null : (JSON.parse(row.error_data) as ErrorData),
    dateCreated: row.created_at,
  };
}

/** A Running entry with the live figures of the job merged into its logData (read time only: the
 * stored entry stays as it was written; progress is not a change of state). */
export function withLiveProgress(entry: JobStatusEntry, progress: JobProgress | null): JobStatusEntry {
  if (entry.status !== 'Running' || progress === null) return entry;
  return {
    ...entry,
    logData: {
      ...(entry.logData ?? { message: '' }),
      rowsRead: progress.rowsRead,
      bytesRead: progress.bytesRead,
      bytesTotal: progress.bytesTotal,
    },
  };
}

/** Renders job rows with their current status, creator and workspace, keeping the rows' order;
 * `signing` signs the links to rejected-rows files. */
export async function viewJobs(db: Db, rows: DatasetJobRow[], signing: LinkSigning): Promise<Job[]> {
  if (rows.length === 0) return [];
  const ids = rows.map((r) => r.id);
  const [latest, summaries] = await Promise.all([
    db
      .selectFrom('dataset_job_logs as l')
      .selectAll('l')
      .where('l.job_id', 'in', ids)
      .where('l.id', 'in', (eb) =>
        eb
          .selectFrom('dataset_job_logs as m')
          .select((m) => m.fn.max('m.id').as('max_id'))
          .where('m.job_id', 'in', ids)
          .groupBy('m.job_id'),
      )
      .execute(),
    summariesOf(db, rows),
  ]);
  const statusOf = new Map(latest.map((l) => [l.job_id, l]));
  return rows.map((row) => {
    const status = statusOf.get(row.id);
    const createdBy = summaries.users.get(row.created_by_user_id);
    const workspace = summaries.workspaces.get(row.workspace_id);
    if (status === undefined || createdBy === undefined || workspace === undefined) {
      throw new Error(`job ${row.id} is missing its status, creator or workspace`);
    }
    const progress = progressOf(row);
    const currentStatus = viewStatusEntry(status);
    // Only a job that ended has a complete list of defects: its final entry carries their count.
    const defects = currentStatus.errorData?.errorCount ?? 0;
    const options = loadOptionsOf(row);
    return {
      datasetJobId: row.id,
      datasetId: row.dataset_id,
      workspace,
      dateCreated: row.created_at,
      createdBy,
      jobType: row.job_type,
      currentStatus: withLiveProgress(currentStatus, progress),
      datasetParentJobId: null,
      children: [],
      allChildrenSucceeded: true,
      mode: row.mode,
      contentType: row.content_type,
      uploadType: row.job_type === 'uploadUrl' ? asUploadType(row.upload_type) : null,
      progress,
      dryRun: options.dryRun,
      maxBadRecords: options.maxBadRecords,
      rejectedRowsUrl: defects > 0 ? rejectedRowsUrl(signing, row.id) : null,
    };
  });
}
