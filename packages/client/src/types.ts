// The resources of the API by name, taken from the generated document types (generated/openapi.ts)
// so that they follow the service: a change of a response there changes (or breaks) them here.
// This is the one file that names paths of the document; when the document gains named component
// schemas, these stay the same types under the same names.
import type { paths } from './generated/openapi.js';

/** The JSON body of a response `S` of operation `O`. */
type JsonOf<O, S extends number> = O extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
/** The JSON request body of operation `O`. */
type BodyOf<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** One element of an array type. */
type ItemOf<A> = A extends readonly (infer T)[] ? T : never;

type DatasetPath = paths['/api/v1/datasets/{id}'];
type DatasetsPath = paths['/api/v1/datasets'];
type JobPath = paths['/api/v1/datasets/jobs/{jobId}'];

/** An installation of the app in a workspace (GET /apps/me/installations). */
export type Installation = ItemOf<JsonOf<paths['/api/v1/apps/me/installations']['get'], 200>['data']>;
/** An access token and when it expires (POST /auth/clientToken). */
export type ClientToken = JsonOf<paths['/api/v1/auth/clientToken']['post'], 200>;
/** What the service knows of the caller (GET /auth/me). */
export type Me = JsonOf<paths['/api/v1/auth/me']['get'], 200>;
/** A dataset with its schema and tags. */
export type Dataset = JsonOf<DatasetPath['get'], 200>;
/** The body of POST /datasets. */
export type NewDataset = BodyOf<DatasetsPath['post']>;
/** The body of PATCH /datasets/:id (at least one field). */
export type DatasetChanges = BodyOf<DatasetPath['patch']>;
/** A tag: an app that may see a dataset. */
export type DatasetTag = ItemOf<Dataset['datasetTags']>;
/** An app a dataset may be tagged with (GET /datasets/tags). */
export type TagCandidate = ItemOf<JsonOf<paths['/api/v1/datasets/tags']['get'], 200>['data']>;
/** The body of POST /datasets/:id/tags. */
export type NewTag = BodyOf<paths['/api/v1/datasets/{id}/tags']['post']>;
/** The answer that starts a load job: its id and, for uploads, the signed URL to PUT the file to. */
export type LoadJobStarted = JsonOf<paths['/api/v1/datasets/{id}/uploadUrl']['post'], 202>;
/** A load job as GET /datasets/jobs/:jobId shows it. */
export type Job = JsonOf<JobPath['get'], 200>;
/** One entry of a job's status log. */
export type JobStatusEntry = Job['currentStatus'];
/** A job's counts and message (`logData` of a status entry). */
export type JobLog = NonNullable<JobStatusEntry['logData']>;
/** A defect of the file: the line, the property when there is one, and what is wrong. */
export type RowError = ItemOf<NonNullable<JobStatusEntry['errorData']>['errors']>;
/** How far a running job has read. */
export type JobProgress = NonNullable<Job['progress']>;
/** A page of records. */
export type RecordsPage = JsonOf<paths['/api/v1/datasets/{id}/records']['get'], 200>;
/** One record: property name to value. */
export type DatasetRecord = ItemOf<RecordsPage['data']>;
/** A page of a job's row errors. */
export type RowErrorsPage = JsonOf<paths['/api/v1/datasets/jobs/{jobId}/errors']['get'], 200>;
/** A signed export link (POST /datasets/:id/records:retrieve). */
export type RetrieveResult = JsonOf<paths['/api/v1/datasets/{id}/records:retrieve']['post'], 200>;

/** How a load treats the records the dataset already holds (docs/loading.md, Load modes). */
export type LoadMode = 'create' | 'replace' | 'append' | 'upsert';
/** The formats an upload URL is declared for. */
export type UploadFormat = 'csv' | 'json' | 'tsv';
/** The states a job ends in. */
export type FinalJobStatus = 'Completed' | 'Failed' | 'Expired';
