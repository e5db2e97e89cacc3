// Schemas of load requests, jobs and their status entries.
import { Type } from 'typebox';
import {
  CONTENT_TYPES,
  DXAPI_STATUS_NAMES,
  JOB_STATUS_CODES,
  JOB_STATUSES,
  JOB_TYPES,
  LOAD_MODES,
  UPLOAD_TYPES,
  type ContentType,
  type DxapiStatusName,
  type JobStatus,
  type JobType,
  type LoadMode,
  type UploadType,
} from '../../domain/jobs/status.js';
import { MAX_BAD_RECORDS_LIMIT } from '../../domain/jobs/load-options.js';
import { component, queryText, ref } from './components.js';
import { Envelope, Timestamp, UserSummary, WorkspaceSummary } from './common.js';

export const ModeQuery = Type.Object({
  mode: Type.Optional(
    Type.Unsafe<(typeof LOAD_MODES)[number]>({
      type: 'string',
      enum: [...LOAD_MODES],
      default: 'create',
      description:
        'What the file does to the records the dataset holds (docs/loading.md, "Load modes"); delete: the file holds primary-key values only, and the records of those keys are deleted',
    }),
  ),
});

/** The load options of uploadUrl and records:load (docs/loading.md, "Dry runs, tolerated bad rows"). */
export const LoadOptionsQuery = Type.Object({
  dryRun: Type.Optional(
    queryText<'true' | 'false'>(
      { enum: ['true', 'false'] },
      {
        type: 'boolean',
        default: false,
        description: 'true: run the whole load and report what it would do, but change nothing',
      },
    ),
  ),
  maxBadRecords: Type.Optional(
    queryText(
      { pattern: '^[0-9]{1,10}$' },
      {
        type: 'integer',
        minimum: 0,
        maximum: MAX_BAD_RECORDS_LIMIT,
        default: 0,
        description: 'Records with defects the load may leave out and still complete',
      },
    ),
  ),
});

export const RecordsLoadQuery = Type.Object({ ...ModeQuery.properties, ...LoadOptionsQuery.properties });

export const UploadUrlQuery = Type.Object({
  ...ModeQuery.properties,
  ...LoadOptionsQuery.properties,
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

export const UploadUrlBody = component(
  'UploadUrlRequest',
  Type.Object({
    contentType: Type.Unsafe<(typeof CONTENT_TYPES)[number]>({
      type: 'string',
      enum: [...CONTENT_TYPES],
      description: 'The format the file will be read as',
    }),
  }),
);

export const RecordsLoadBody = component(
  'RecordsLoadRequest',
  Type.Object({
    url: Type.String({
      minLength: 1,
      maxLength: 8192,
      description: 'An http(s) URL of the file (CSV or JSON), typically presigned',
    }),
  }),
);

/** The answer that starts a load job: the job id and, for uploads, the signed URL. */
export const UploadJobResult = component(
  'LoadJobStarted',
  Type.Object(
    {
      datasetId: Type.String(),
      url: Type.String({
        description:
          'uploadUrl: the signed URL to PUT the file to (valid for a limited time); records:load: the URL given',
      }),
      jobId: Type.String(),
    },
    { description: 'A load job was created; poll GET /api/v1/datasets/jobs/{jobId}' },
  ),
);

export const LogData = component(
  'JobLogData',
  Type.Object({
    message: Type.String(),
    rowsRead: Type.Optional(Type.Integer()),
    bytesRead: Type.Optional(
      Type.Integer({
        description: 'Running: bytes of the file read so far (as stored or sent, before gunzip)',
      }),
    ),
    bytesTotal: Type.Optional(
      Type.Union([Type.Integer(), Type.Null()], {
        description: "Running: the file's size, null when unknown",
      }),
    ),
    rowsLoaded: Type.Optional(Type.Integer()),
    duplicatesCollapsed: Type.Optional(Type.Integer()),
    rowsRejected: Type.Optional(
      Type.Integer({
        description: 'Records with defects, left out of the load (Completed) or not loaded (Failed)',
      }),
    ),
    recordsAdded: Type.Optional(
      Type.Integer({ description: 'append, upsert: records whose primary key the dataset did not hold' }),
    ),
    recordsReplaced: Type.Optional(
      Type.Integer({ description: 'upsert: records of the dataset replaced by the same key in the file' }),
    ),
    recordsDeleted: Type.Optional(
      Type.Integer({ description: 'delete: records of the dataset deleted by a key of the file' }),
    ),
    keysNotFound: Type.Optional(
      Type.Integer({
        description: 'delete: distinct keys of the file that matched no record (counted, not errors)',
      }),
    ),
  }),
);

export const RowError = component(
  'JobError',
  Type.Object(
    {
      line: Type.Integer({ description: 'The line of the file (1: the first)' }),
      property: Type.Optional(Type.String()),
      message: Type.String(),
    },
    { description: 'A defect of a record of the file' },
  ),
);

export const ErrorData = component(
  'JobErrorData',
  Type.Object({
    errorCount: Type.Integer({ description: 'Every defect found (a record may have several)' }),
    errors: Type.Array(ref(RowError), {
      maxItems: 100,
      description: 'The first 100 in line order; GET .../errors lists them all',
    }),
  }),
);

/** pageSize and pageToken of the paged listings. */
export const PageQueryFields = {
  pageSize: Type.Optional(
    queryText(
      { pattern: '^[0-9]+$' },
      { type: 'integer', minimum: 1, maximum: 10000, default: 100, description: 'Items per page' },
    ),
  ),
  pageToken: Type.Optional(Type.String({ description: 'nextPageToken of the previous page' })),
};

export const ErrorsQuery = Type.Object(PageQueryFields);

export const ErrorsPage = component(
  'JobErrorPage',
  Type.Object({
    metadata: Type.Object({
      count: Type.Integer(),
      nextPageToken: Type.Union([Type.String(), Type.Null()], { description: 'null: the last page' }),
    }),
    data: Type.Array(ref(RowError)),
  }),
);

export const JobStatusEntry = component(
  'JobStatus',
  Type.Object(
    {
      datasetJobLogId: Type.Integer(),
      datasetJobStatusCode: Type.Integer({
        description: Object.entries(JOB_STATUS_CODES)
          .map(([name, code]) => `${code} ${name}`)
          .join(', '),
      }),
      datasetJobStatusName: Type.Unsafe<DxapiStatusName>({
        type: 'string',
        enum: [...new Set(Object.values(DXAPI_STATUS_NAMES))],
        description:
          "DXAPI's name of the status: UnknownError for Failed and Expired, where DXAPI's clients stop; `status` is the service's own",
      }),
      status: Type.Unsafe<JobStatus>({
        type: 'string',
        enum: [...JOB_STATUSES],
        description: 'The status as the service names it',
      }),
      logData: Type.Union([ref(LogData), Type.Null()]),
      errorData: Type.Union([ref(ErrorData), Type.Null()]),
      dateCreated: Timestamp,
    },
    { description: 'A status entry of a load job' },
  ),
);

export const JobStatusList = Envelope('JobStatusList', JobStatusEntry);

export const Progress = component(
  'JobProgress',
  Type.Object(
    {
      bytesRead: Type.Integer({
        description: 'Bytes of the file read so far (as stored or sent, before gunzip)',
      }),
      bytesTotal: Type.Union([Type.Integer(), Type.Null()], {
        description: "The file's size: the stored upload's, or the URL's Content-Length; null when unknown",
      }),
      rowsRead: Type.Integer({ description: 'Records read so far, valid or not' }),
      updatedAt: Timestamp,
    },
    { description: 'Refreshed about every second while the job runs; the final figures once it ended' },
  ),
);

export const Job = component(
  'Job',
  Type.Object(
    {
      datasetJobId: Type.String(),
      datasetId: Type.String(),
      workspace: ref(WorkspaceSummary),
      dateCreated: Timestamp,
      createdBy: ref(UserSummary),
      jobType: Type.Unsafe<JobType>({ type: 'string', enum: [...JOB_TYPES] }),
      currentStatus: ref(JobStatusEntry),
      datasetParentJobId: Type.Null({ description: "DXAPI's job tree: a job here has no parent" }),
      children: Type.Array(Type.Never(), {
        maxItems: 0,
        description: "DXAPI's job tree: a job here has no children",
      }),
      allChildrenSucceeded: Type.Literal(true, {
        description: "DXAPI's job tree: true, as DXAPI shows it for a job without children",
      }),
      mode: Type.Unsafe<LoadMode>({ type: 'string', enum: [...LOAD_MODES] }),
      contentType: Type.Union(
        [Type.Unsafe<ContentType>({ type: 'string', enum: [...CONTENT_TYPES] }), Type.Null()],
        {
          description: 'The format the file is read as (for uploads, the one the PUT named)',
        },
      ),
      uploadType: Type.Union(
        [Type.Unsafe<UploadType>({ type: 'string', enum: [...UPLOAD_TYPES] }), Type.Null()],
        {
          description: 'uploadUrl jobs: singlerequest or resumable; null for recordsLoad',
        },
      ),
      progress: Type.Union([ref(Progress), Type.Null()], {
        description: 'null until a worker starts the job (and while it waits again after a release)',
      }),
      dryRun: Type.Boolean({ description: 'true: the load reports what it would do and changes nothing' }),
      maxBadRecords: Type.Integer({ description: 'Records with defects the load may leave out' }),
      rejectedRowsUrl: Type.Union([Type.String(), Type.Null()], {
        description:
          'Once the job ended with defects: a signed link (1 hour, new on every read) to a CSV of them (line,property,message,originalText)',
      }),
    },
    { description: 'A load job' },
  ),
);

export const JobsQuery = Type.Object(PageQueryFields);

export const JobList = component(
  'JobList',
  Type.Object(
    {
      metadata: Type.Object({
        count: Type.Integer({ description: 'The number of items in data' }),
        nextPageToken: Type.Union([Type.String(), Type.Null()], { description: 'null: the last page' }),
      }),
      data: Type.Array(ref(Job)),
    },
    { description: 'A page of the load jobs of a dataset, newest first' },
  ),
);

export const JobParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 64 }) });

export const UploadParams = Type.Object({ jobId: Type.String({ minLength: 1, maxLength: 64 }) });

/** The signature of a URL the service signed; a missing or bad one is 403, not 400. */
export const SignedQuery = Type.Object({
  expires: Type.Optional(
    Type.String({ description: 'Part of the signed URL: its expiry (Unix seconds). Send the URL as given.' }),
  ),
  signature: Type.Optional(
    Type.String({
      description: 'Part of the signed URL: HMAC-SHA256 over method, path and expiry. Send the URL as given.',
    }),
  ),
});
