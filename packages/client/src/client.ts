// DxClient: an installation's view of the API (datasets, loads, jobs, records) with an access
// token, fixed or minted and refreshed by DxApp.
import {
  JobTimeoutError,
  isFinal,
  readThroughOutage,
  resultOf,
  type JobResult,
  type WaitOptions,
} from './jobs.js';
import { apiBaseOf, sleep, Transport, type Credential, type FetchLike } from './http.js';
import { problemFromResponse } from './problem.js';
import {
  formatOfName,
  MEDIA_TYPES,
  putResumable,
  putWhole,
  type UploadProgress,
  type UploadReceipt,
  type UploadSource,
} from './upload.js';
import type {
  ChangeEntry,
  ChangeFeedPage,
  Dataset,
  DatasetChanges,
  SchemaChange,
  SchemaChangeReport,
  DatasetRecord,
  DatasetTag,
  Job,
  JobsPage,
  LoadJobStarted,
  LoadMode,
  Me,
  NewDataset,
  NewTag,
  RecordsPage,
  RetrieveResult,
  RowError,
  RowErrorsPage,
  TagCandidate,
  UploadFormat,
} from './types.js';

/** The package's version, sent in User-Agent. */
export const CLIENT_VERSION = '0.1.0';

export interface DxClientOptions {
  /** The service: `http://host:8080` or `http://host:8080/api/v1`. */
  baseUrl: string;
  /** An access token, or a function that gives the current one (`stale`: the one refused). */
  accessToken: string | Credential;
  /** Default: the platform's fetch. */
  fetch?: FetchLike;
  userAgent?: string;
}

/** Options of both loads (upload and records:load); docs/loading.md. */
export interface LoadOptions {
  /** create (default: the dataset must be empty), replace, append, upsert, or delete (the file
   * holds primary-key values only; the records of those keys are deleted). */
  mode?: LoadMode;
  /** Run the whole load, report what it would do, change nothing. */
  dryRun?: boolean;
  /** Records with defects the load may leave out and still complete (default 0). */
  maxBadRecords?: number;
  /** Makes the request safe to retry: the same key within 24 hours answers the first answer. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface UploadOptions extends LoadOptions {
  /** The file's format; default from the path's extension, else csv. */
  format?: UploadFormat;
  /** A resumable session taking the file in slices (`chunkSize`, default 8 MiB). */
  resumable?: boolean;
  chunkSize?: number;
  /** Called as the file's bytes go out. */
  onProgress?: (progress: UploadProgress) => void;
}

/** An upload whose file is stored: its job is Queued. */
export interface UploadResult extends UploadReceipt {
  /** The signed URL the file went to (valid an hour; resumable: the session). */
  url: string;
}

export interface PageOptions {
  /** 1 to 10000 (default 100). */
  pageSize?: number;
  signal?: AbortSignal;
}

export interface RecordQuery extends PageOptions {
  /** Equality filters: property → value. */
  filters?: Record<string, string | number | boolean>;
}

/** A client of one installation. */
export class DxClient {
  private readonly http: Transport;

  constructor(options: DxClientOptions) {
    const token = options.accessToken;
    const credential: Credential = typeof token === 'string' ? async () => token : token;
    this.http = new Transport(
      apiBaseOf(options.baseUrl),
      options.fetch ?? ((input, init) => fetch(input, init)),
      credential,
      options.userAgent ?? `dataset-exchange-client/${CLIENT_VERSION}`,
    );
  }

  /** The API base URL (…/api/v1). */
  get baseUrl(): string {
    return this.http.base;
  }

  /** The caller: app, workspace and the token's permissions. */
  me(): Promise<Me> {
    return this.http.json('GET', '/auth/me');
  }

  // ---- datasets ----

  createDataset(dataset: NewDataset, options: { idempotencyKey?: string } = {}): Promise<Dataset> {
    return this.http.json('POST', '/datasets', {
      json: dataset,
      headers: idempotency(options.idempotencyKey),
    });
  }

  async listDatasets(): Promise<Dataset[]> {
    return (await this.http.json<{ data: Dataset[] }>('GET', '/datasets')).data;
  }

  getDataset(datasetId: string): Promise<Dataset> {
    return this.http.json('GET', `/datasets/${enc(datasetId)}`);
  }

  /** Renames or re-describes a dataset, or changes its schema (with `schema`: the whole new one). */
  updateDataset(datasetId: string, changes: DatasetChanges): Promise<Dataset> {
    return this.http.json('PATCH', `/datasets/${enc(datasetId)}`, { json: changes });
  }

  /** What changing a dataset's schema to `schema` would do; nothing is changed (dryRun=true). */
  previewSchemaChange(datasetId: string, schema: SchemaChange): Promise<SchemaChangeReport> {
    return this.http.json('PATCH', `/datasets/${enc(datasetId)}`, {
      query: { dryRun: 'true' },
      json: { schema },
    });
  }

  async deleteDataset(datasetId: string): Promise<void> {
    await this.http.json('DELETE', `/datasets/${enc(datasetId)}`);
  }

  /** The apps a dataset may be tagged with (those connected to the workspace). */
  async tagCandidates(): Promise<TagCandidate[]> {
    return (await this.http.json<{ data: TagCandidate[] }>('GET', '/datasets/tags')).data;
  }

  addTag(datasetId: string, tag: NewTag): Promise<DatasetTag> {
    return this.http.json('POST', `/datasets/${enc(datasetId)}/tags`, { json: tag });
  }

  async removeTag(datasetId: string, datasetTagId: string): Promise<void> {
    await this.http.json('DELETE', `/datasets/${enc(datasetId)}/tags/${enc(datasetTagId)}`);
  }

  // ---- loads ----

  /** Asks for a signed upload URL (the job waits for the file as `Created`). */
  uploadUrl(
    datasetId: string,
    format: UploadFormat,
    options: LoadOptions & { resumable?: boolean } = {},
  ): Promise<LoadJobStarted> {
    return this.http.json('POST', `/datasets/${enc(datasetId)}/uploadUrl`, {
      query: { ...loadQuery(options), ...(options.resumable === true ? { type: 'resumable' } : {}) },
      json: { contentType: format },
      headers: idempotency(options.idempotencyKey),
      ...signalOf(options),
    });
  }

  /** Uploads a file: an upload URL, then the PUT (or the slices of a resumable session). */
  async upload(datasetId: string, source: UploadSource, options: UploadOptions = {}): Promise<UploadResult> {
    const format = options.format ?? ('path' in source ? formatOfName(source.path) : null) ?? 'csv';
    const started = await this.uploadUrl(datasetId, format, options);
    const put = {
      job: started,
      mediaType: MEDIA_TYPES[format],
      ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
      ...signalOf(options),
    };
    const receipt =
      options.resumable === true
        ? await putResumable(this.http.fetch, started.url, source, {
            ...put,
            ...(options.chunkSize !== undefined ? { chunkSize: options.chunkSize } : {}),
          })
        : await putWhole(started.url, source, put);
    return { ...receipt, url: started.url };
  }

  /** Has the service fetch the file at `url` (http(s), not internal addresses unless allowlisted). */
  loadFromUrl(datasetId: string, url: string, options: LoadOptions = {}): Promise<LoadJobStarted> {
    return this.http.json('POST', `/datasets/${enc(datasetId)}/records:load`, {
      query: loadQuery(options),
      json: { url },
      headers: idempotency(options.idempotencyKey),
      ...signalOf(options),
    });
  }

  /** Uploads a file and waits for its job: the one call of a script that loads a file. */
  async load(
    datasetId: string,
    source: UploadSource,
    options: UploadOptions & Omit<WaitOptions, 'signal'> = {},
  ): Promise<JobResult> {
    const { jobId } = await this.upload(datasetId, source, options);
    return this.waitForJob(jobId, options);
  }

  // ---- jobs ----

  getJob(jobId: string): Promise<Job> {
    return this.http.json('GET', `/datasets/jobs/${enc(jobId)}`);
  }

  /** The dataset's jobs, newest first, every page of them. */
  async listJobs(datasetId: string, options: PageOptions = {}): Promise<Job[]> {
    const jobs: Job[] = [];
    let pageToken: string | undefined;
    do {
      const page = await this.http.json<JobsPage>('GET', `/datasets/${enc(datasetId)}/jobs`, {
        query: { pageSize: options.pageSize, pageToken },
        ...signalOf(options),
      });
      jobs.push(...page.data);
      pageToken = page.metadata.nextPageToken ?? undefined;
    } while (pageToken !== undefined);
    return jobs;
  }

  /**
   * Reads the job until it ends, waiting longer between reads as it goes (backoff ×1.5); with
   * `unavailableMs`, rides over a restart of the service.
   */
  async waitForJob(jobId: string, options: WaitOptions = {}): Promise<JobResult> {
    const until = Date.now() + (options.timeoutMs ?? 3_600_000);
    const max = options.maxIntervalMs ?? 2000;
    const read = () => this.http.json<Job>('GET', `/datasets/jobs/${enc(jobId)}`, signalOf(options));
    for (let delay = options.initialIntervalMs ?? 200; ; delay = Math.min(max, delay * 1.5)) {
      const job = await readThroughOutage(read, options);
      options.onPoll?.(job);
      if (isFinal(job)) return resultOf(job);
      if (Date.now() + delay > until) throw new JobTimeoutError(job);
      await sleep(delay, options.signal);
    }
  }

  /** Every defect a job found, in line order, page after page. */
  async *jobErrors(jobId: string, options: PageOptions = {}): AsyncGenerator<RowError> {
    let pageToken: string | undefined;
    do {
      const page = await this.http.json<RowErrorsPage>('GET', `/datasets/jobs/${enc(jobId)}/errors`, {
        query: { pageSize: options.pageSize, pageToken },
        ...signalOf(options),
      });
      yield* page.data;
      pageToken = page.metadata.nextPageToken ?? undefined;
    } while (pageToken !== undefined);
  }

  // ---- records ----

  /** The dataset's records page by page (keyset order); a load committed meanwhile is a 409. */
  async *recordPages(datasetId: string, query: RecordQuery = {}): AsyncGenerator<RecordsPage> {
    let pageToken: string | undefined;
    do {
      const page = await this.http.json<RecordsPage>('GET', `/datasets/${enc(datasetId)}/records`, {
        query: { ...query.filters, pageSize: query.pageSize, pageToken },
        ...signalOf(query),
      });
      yield page;
      pageToken = page.metadata.nextPageToken ?? undefined;
    } while (pageToken !== undefined);
  }

  /**
   * The dataset's records one by one, fetched a page at a time. `T` is the record type the
   * dataset's schema gives (`records<Voter>(id)`): the caller's word for it, not checked, as with
   * `Response.json()`.
   */
  async *records<T extends object = DatasetRecord>(
    datasetId: string,
    query: RecordQuery = {},
  ): AsyncGenerator<T> {
    for await (const page of this.recordPages(datasetId, query)) yield* page.data as T[];
  }

  /**
   * The changes since `since` (the `changesCursor` of a records read, or a cursor kept from an
   * earlier feed), in commit order, one by one, fetched a page at a time. Once the iteration
   * ends, the feed's `cursor` is the one to keep for next time. A reader that stops early (break)
   * keeps a cursor that loses nothing: it moves on a page at a time, once every change of the
   * page was handed out, so some changes may come again (applying one twice is harmless: each
   * is a state, not a difference). An expired cursor throws a
   * DxProblemError with code `changes_cursor_expired` (410): read everything again.
   */
  changes(datasetId: string, since: string, options: PageOptions = {}): ChangeFeed {
    return new ChangeFeed(since, async (cursor) =>
      this.http.json<ChangeFeedPage>('GET', `/datasets/${enc(datasetId)}/changes`, {
        query: { since: cursor, pageSize: options.pageSize },
        ...signalOf(options),
      }),
    );
  }

  /** A signed link (1 hour) to every record as it is now: CSV (default) or NDJSON. */
  retrieveRecords(datasetId: string, format: 'csv' | 'json' = 'csv'): Promise<RetrieveResult> {
    return this.http.json('POST', `/datasets/${enc(datasetId)}/records:retrieve`, {
      json: { contentType: format },
    });
  }

  /** Every record as it is now, streamed: CSV with a header row, or NDJSON. */
  async downloadRecords(
    datasetId: string,
    format: 'csv' | 'json' = 'csv',
    options: { signal?: AbortSignal } = {},
  ): Promise<ReadableStream<Uint8Array>> {
    const { url } = await this.retrieveRecords(datasetId, format);
    const res = await this.http.fetch(url, signalOf(options));
    if (!res.ok) throw await problemFromResponse(res, `GET ${new URL(url).pathname}`);
    if (res.body === null) return new ReadableStream({ start: (c) => c.close() });
    return res.body;
  }
}

/** The change feed of one dataset from a cursor (DxClient.changes): iterate it, then keep `cursor`. */
export class ChangeFeed implements AsyncIterable<ChangeEntry> {
  constructor(
    /** Where the changes taken so far end; after the iteration, the cursor to keep. */
    public cursor: string,
    private readonly page: (cursor: string) => Promise<ChangeFeedPage>,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<ChangeEntry> {
    for (;;) {
      const page = await this.page(this.cursor);
      let handedOut = 0;
      try {
        for (const change of page.data) {
          handedOut++;
          yield change;
        }
      } finally {
        // Also when the reader stops (break) right after the page's last change.
        if (handedOut === page.data.length) this.cursor = page.metadata.nextCursor;
      }
      if (!page.metadata.hasMore) return;
    }
  }
}

function enc(id: string): string {
  return encodeURIComponent(id);
}

function idempotency(key: string | undefined): Record<string, string> {
  return key === undefined ? {} : { 'idempotency-key': key };
}

function signalOf(options: { signal?: AbortSignal }): { signal?: AbortSignal } {
  return options.signal !== undefined ? { signal: options.signal } : {};
}

function loadQuery(options: LoadOptions): Record<string, string | undefined> {
  return {
    mode: options.mode,
    dryRun: options.dryRun === undefined ? undefined : String(options.dryRun),
    maxBadRecords: options.maxBadRecords === undefined ? undefined : String(options.maxBadRecords),
  };
}
