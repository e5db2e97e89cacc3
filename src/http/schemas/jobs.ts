// Schemas of load requests, jobs and their status entries.
import { Type } from 'typebox';
import {
  CONTENT_TYPES,
  JOB_STATUS_CODES,
  LOAD_MODES,
  UPLOAD_TYPES,
  type UploadType,
} from '../../domain/jobs/status.js';
import { Timestamp, UserSummary, WorkspaceSummary } from './common.js';

export const ModeQuery = Type.Object({
  mode: Type.Optional(
    Type.Unsafe<(typeof LOAD_MODES)[number]>({ type: 'string', enum: [...LOAD_MODES], default: 'create' }),
  ),
});

export const UploadUrlQuery = Type.Object({
  ...ModeQuery.properties,
  type: Type.Optional(
    Type.Unsafe<UploadType>({
      type: 'string',
      enum: [...UPLOAD_TYPES],
      default: 'singlerequest',
      description:
        'resumable: the URL is a resumable session (Google Cloud Storage semantics) taking the file in slices',
    }),
  ),
});

export const UploadUrlBody = Type.Object({
  contentType: Type.Unsafe<(typeof CONTENT_TYPES)[number]>({ type: 'string', enum: [...CONTENT_TYPES] }),
});

export const RecordsLoadBody = Type.Object({ url: Type.String({ minLength: 1, maxLength: 8192 }) });

/** The answer that starts a load job: the job id and, for uploads, the signed URL. */
export const UploadJobResult = Type.Object({
  datasetId: Type.String(),
  url: Type.String(),
  jobId: Type.String(),
});

const LogData = Type.Object({
  message: Type.String(),
  rowsRead: Type.Optional(Type.Integer()),
  rowsLoaded: Type.Optional(Type.Integer()),
  duplicatesCollapsed: Type.Optional(Type.Integer()),
  recordsAdded: Type.Optional(
    Type.Integer({ description: 'append, upsert: records whose primary key the dataset did not hold' }),
  ),
  recordsReplaced: Type.Optional(
    Type.Integer({ description: 'upsert: records of the dataset replaced by the same key in the file' }),
  ),
});

const ErrorData = Type.Object({
  errorCount: Type.Integer(),
  errors: Type.Array(
    Type.Object({ line: Type.Integer(), property: Type.Optional(Type.String()), message: Type.String() }),
    { maxItems: 100 },
  ),
});

export const JobStatusEntry = Type.Object({
  datasetJobLogId: Type.Integer(),
  datasetJobStatusCode: Type.Integer({
    description: Object.entries(JOB_STATUS_CODES)
      .map(([name, code]) => `${code} ${name}`)
      .join(', '),
  }),
  datasetJobStatusName: Type.String(),
  logData: Type.Union([LogData, Type.Null()]),
  errorData: Type.Union([ErrorData, Type.Null()]),
  dateCreated: Timestamp,
});

export const Job = Type.Object({
  datasetJobId: Type.String(),
  datasetId: Type.String(),
  workspace: WorkspaceSummary,
  dateCreated: Timestamp,
  createdBy: UserSummary,
  jobType: Type.String(),
  currentStatus: JobStatusEntry,
  datasetParentJobId: Type.Null(),
  children: Type.Array(Type.Never()),
  allChildrenSucceeded: Type.Null(),
  mode: Type.String(),
  contentType: Type.Union([Type.String(), Type.Null()], {
    description: 'The format the file is read as (for uploads, the one the PUT named)',
  }),
  uploadType: Type.Union(
    [Type.Unsafe<UploadType>({ type: 'string', enum: [...UPLOAD_TYPES] }), Type.Null()],
    {
      description: 'uploadUrl jobs: singlerequest or resumable; null for recordsLoad',
    },
  ),
});

export const JobParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 64 }) });

export const UploadParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 64 }) });
export const SignedQuery = Type.Object({
  expires: Type.Optional(Type.String()),
  signature: Type.Optional(Type.String()),
});
