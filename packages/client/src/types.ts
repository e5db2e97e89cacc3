// The resources of the API by name, taken from the generated document types (generated/openapi.ts)
// so that they follow the service: a change of a response there changes (or breaks) them here.
// This is the one file that names paths of the document; when the document gains named component
// schemas, these stay the same types under the same names. Paths are written with `{}` for their
// parameters, so a renamed path parameter (`{id}` → `{datasetId}`) changes nothing here.
import type { paths } from './generated/openapi.js';

/** Whether document path `K` fits pattern `T`, whose `{}` stand for any one path parameter. */
type Fits<K extends string, T extends string> = T extends `${infer Head}{}${infer Rest}`
  ? K extends `${Head}{${infer Name}}${infer After}`
    ? Name extends `${string}/${string}`
      ? false
      : Fits<After, Rest>
    : false
  : K extends T
    ? true
    : false;
/** The document's path that fits `T`; a pattern no path fits fails to compile where it is used. */
type PathOf<T extends string> = {
  [K in Extract<keyof paths, string>]: Fits<K, T> extends true ? K : never;
}[Extract<keyof paths, string>];
type Route<T extends string> = [PathOf<T>] extends [never]
  ? `no path of the document fits ${T}` // indexing this string type is the compile error
  : paths[PathOf<T>];

/** The JSON body of a response `S` of operation `O`. */
type JsonOf<O, S extends number> = O extends {
  responses: { [K in S]: { content: { 'application/json': infer B } } };
}
  ? B
  : never;
/** The JSON request body of operation `O`. */
type BodyOf<O> = O extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
/** Any object type as an interface may extend it: the resources are interfaces extending what
 * the document's paths answer, so that editors name them (`Dataset`, `Job`) rather than expand
 * them. */
type Is<T> = T;
/** One element of an array type. */
type ItemOf<A> = A extends readonly (infer T)[] ? T : never;

type DatasetPath = Route<'/api/v1/datasets/{}'>;
type DatasetsPath = Route<'/api/v1/datasets'>;
type JobPath = Route<'/api/v1/datasets/jobs/{}'>;
type JobAnswer = JsonOf<JobPath['get'], 200>;

/** An installation of the app in a workspace (GET /apps/me/installations). */
export interface Installation extends ItemOf<
  JsonOf<Route<'/api/v1/apps/me/installations'>['get'], 200>['data']
> {}
/** An access token and when it expires (POST /auth/clientToken). */
export interface ClientToken extends JsonOf<Route<'/api/v1/auth/clientToken'>['post'], 200> {}
/** What the service knows of the caller (GET /auth/me). */
export interface Me extends JsonOf<Route<'/api/v1/auth/me'>['get'], 200> {}
/** A dataset with its schema and tags. */
export interface Dataset extends JsonOf<DatasetPath['get'], 200> {}
/** The body of POST /datasets. */
export interface NewDataset extends BodyOf<DatasetsPath['post']> {}
/** The body of PATCH /datasets/:id (at least one field). */
export interface DatasetChanges extends BodyOf<DatasetPath['patch']> {}
/** What a schema change would do (PATCH /datasets/:id?dryRun=true with a schema); nothing changed. */
export interface SchemaChangeReport extends Is<
  Extract<JsonOf<DatasetPath['patch'], 200>, { dryRun: true }>
> {}
/** A dataset's new schema, as PATCH /datasets/:id takes it (renames and defaults included). */
export interface SchemaChange extends Is<NonNullable<DatasetChanges['schema']>> {}
/** A tag: an app that may see a dataset. */
export interface DatasetTag extends ItemOf<Dataset['datasetTags']> {}
/** An app a dataset may be tagged with (GET /datasets/tags). */
export interface TagCandidate extends ItemOf<JsonOf<Route<'/api/v1/datasets/tags'>['get'], 200>['data']> {}
/** The body of POST /datasets/:id/tags. */
export interface NewTag extends BodyOf<Route<'/api/v1/datasets/{}/tags'>['post']> {}
/** The answer that starts a load job: its id and, for uploads, the signed URL to PUT the file to. */
export interface LoadJobStarted extends JsonOf<Route<'/api/v1/datasets/{}/uploadUrl'>['post'], 202> {}
/** A load job as GET /datasets/jobs/:jobId shows it. */
export interface Job extends Omit<JobAnswer, 'currentStatus' | 'progress'> {
  currentStatus: JobStatusEntry;
  /** How far a running job has read; null until its worker has opened the file. */
  progress: JobProgress | null;
}
/** A page of a dataset's jobs (GET /datasets/:id/jobs). */
export interface JobsPage extends JsonOf<Route<'/api/v1/datasets/{}/jobs'>['get'], 200> {}
/** One entry of a job's status log. */
export interface JobStatusEntry extends Omit<JobAnswer['currentStatus'], 'logData'> {
  logData: JobLog | null;
}
/** A job's counts and message (`logData` of a status entry). */
export interface JobLog extends Is<NonNullable<JobAnswer['currentStatus']['logData']>> {}
/** A defect of the file: the line, the property when there is one, and what is wrong. */
export interface RowError extends ItemOf<NonNullable<JobStatusEntry['errorData']>['errors']> {}
/** How far a running job has read. */
export interface JobProgress extends Is<NonNullable<JobAnswer['progress']>> {}
/** A page of records. */
export interface RecordsPage extends JsonOf<Route<'/api/v1/datasets/{}/records'>['get'], 200> {}
/** One record: property name to value. */
export interface DatasetRecord extends ItemOf<RecordsPage['data']> {}
/** A page of a job's row errors. */
export interface RowErrorsPage extends JsonOf<Route<'/api/v1/datasets/jobs/{}/errors'>['get'], 200> {}
/** A page of the change feed (GET /datasets/:id/changes). */
export interface ChangeFeedPage extends JsonOf<Route<'/api/v1/datasets/{}/changes'>['get'], 200> {}
/** One change: an upserted record, a deleted key, or a schema change. */
export interface ChangeEntry extends ItemOf<ChangeFeedPage['data']> {}
/** A signed export link (POST /datasets/:id/records:retrieve). */
export interface RetrieveResult extends JsonOf<Route<'/api/v1/datasets/{}/records:retrieve'>['post'], 200> {}

/** How a load treats the records the dataset already holds (docs/loading.md, Load modes). */
export type LoadMode = Job['mode'];
/** The formats an upload URL is declared for. */
export type UploadFormat = BodyOf<Route<'/api/v1/datasets/{}/uploadUrl'>['post']>['contentType'];
/** The states a job ends in. */
export type FinalJobStatus = Extract<JobStatusEntry['status'], 'Completed' | 'Failed' | 'Expired'>;
