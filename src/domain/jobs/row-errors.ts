// Every defect of a job's file, kept in `dataset_job_errors`: written in batches while the file is
// parsed, then read in line order as pages (GET .../errors), as the job view's first 100, and as
// the rejected-rows CSV streamed page by page. Only the errors of the job's last attempt count.
import type { Kysely } from 'kysely';
import type { DatasetJobErrorRow, DatasetJobRow, Tables } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import type { Db } from '../identity/users.js';
import type { DatasetReader } from '../datasets/datasets.js';
import type { CollectedError } from '../loading/index.js';
import { decodePageToken, encodePageToken, invalidPageToken, parsePageSize } from '../records/query.js';
import { csvField } from '../records/render.js';
import { findVisibleJob } from './jobs.js';
import type { JobError } from './status.js';

/** Rows per INSERT: 7 values each stays far below both engines' limit on bound parameters. */
const INSERT_ROWS = 500;
/** Rows per read of the rejected-rows file. */
const CSV_PAGE_ROWS = 1000;

/** Writes the defects one attempt of a job finds. */
export class RowErrorLog {
  private constructor(
    private readonly db: Kysely<Tables>,
    private readonly jobId: string,
    private readonly attempt: number,
  ) {}

  /** The log of the job's current attempt; the errors of earlier attempts are deleted first. */
  static async open(db: Kysely<Tables>, job: DatasetJobRow): Promise<RowErrorLog> {
    if (job.attempts > 1) {
      await db
        .deleteFrom('dataset_job_errors')
        .where('job_id', '=', job.id)
        .where('attempt', '<', job.attempts)
        .execute();
    }
    return new RowErrorLog(db, job.id, job.attempts);
  }

  /** Stores a batch of defects (from ErrorCollector.take). */
  async save(errors: CollectedError[]): Promise<void> {
    for (let i = 0; i < errors.length; i += INSERT_ROWS) {
      const rows = errors.slice(i, i + INSERT_ROWS).map((e) => ({
        job_id: this.jobId,
        attempt: this.attempt,
        line: e.line,
        seq: e.seq,
        property: e.property ?? null,
        message: e.message,
        original_text: e.originalText,
      }));
      await this.db.insertInto('dataset_job_errors').values(rows).execute();
    }
  }

  /** The first `limit` defects in line order (the job view keeps 100). */
  async first(limit: number): Promise<JobError[]> {
    const rows = await errorsAfter(this.db, this.jobId, this.attempt, null, limit);
    return rows.map(jobError);
  }
}

/** Where a page of errors ends: the line and seq of its last error. */
type ErrorPosition = [line: number, seq: number];

/** The job's errors (of `attempt`) after `after`, in line order, at most `limit`. */
function errorsAfter(
  db: Db,
  jobId: string,
  attempt: number,
  after: ErrorPosition | null,
  limit: number,
): Promise<DatasetJobErrorRow[]> {
  return (
    db
      .selectFrom('dataset_job_errors')
      .selectAll()
      .where('job_id', '=', jobId)
      .where('attempt', '=', attempt)
      // A row-value comparison, so both engines seek the primary key to the position (an OR of
      // the two columns made SQLite scan the job's errors from the start for every page).
      .$if(after !== null, (q) =>
        q.where((eb) => eb(eb.refTuple('line', 'seq'), '>', eb.tuple(...(after as ErrorPosition)))),
      )
      .orderBy('line')
      .orderBy('seq')
      .limit(limit)
      .execute()
  );
}

function jobError(row: DatasetJobErrorRow): JobError {
  const { line, property, message } = row;
  return property === null ? { line, message } : { line, property, message };
}

/** A page of errors as GET /datasets/jobs/:jobId/errors answers it (E: JobError). */
export interface ErrorsPage<E extends JobError = JobError> {
  metadata: { count: number; nextPageToken: string | null };
  data: E[];
}

/** A defect with the text of its record as the parser saw it (cut at 4096 characters): '' when
 * not known, null on a record's second and later defects (the first carries it). */
export interface JobErrorWithText extends JobError {
  originalText: string | null;
}

/** What a page of errors is asked with: GET .../errors' query. */
type ErrorsQuery = { pageSize?: unknown; pageToken?: unknown };

/** One page of a visible job's errors, in line order; the token is tied to the job's attempt. */
export function rowErrorsPage(
  db: Db,
  caller: DatasetReader,
  jobId: string,
  query: ErrorsQuery,
): Promise<ErrorsPage> {
  return errorsPage(db, caller, jobId, query, jobError);
}

/** rowErrorsPage with each defect's record text (the console shows it beside the defect). */
export function rowErrorsPageWithText(
  db: Db,
  caller: DatasetReader,
  jobId: string,
  query: ErrorsQuery,
): Promise<ErrorsPage<JobErrorWithText>> {
  return errorsPage(db, caller, jobId, query, (row) => ({
    ...jobError(row),
    originalText: row.original_text,
  }));
}

async function errorsPage<E extends JobError>(
  db: Db,
  caller: DatasetReader,
  jobId: string,
  query: ErrorsQuery,
  shape: (row: DatasetJobErrorRow) => E,
): Promise<ErrorsPage<E>> {
  const job = await findVisibleJob(db, caller, jobId);
  const pageSize = parsePageSize(query.pageSize);
  let after: ErrorPosition | null = null;
  if (typeof query.pageToken === 'string' && query.pageToken !== '') {
    const token = decodePageToken(query.pageToken, 2);
    const [line, seq] = token.k;
    if (!Number.isSafeInteger(line) || !Number.isSafeInteger(seq)) throw invalidPageToken();
    if (token.g !== job.attempts) {
      throw problem(
        'conflict',
        'The job ran again since this page token was issued; start again without it.',
        { code: 'page_token_stale' },
      );
    }
    after = [line as number, seq as number];
  }
  const rows = await errorsAfter(db, job.id, job.attempts, after, pageSize + 1);
  const more = rows.length > pageSize;
  const shown = more ? rows.slice(0, pageSize) : rows;
  const last = shown.at(-1);
  const nextPageToken =
    more && last !== undefined ? encodePageToken({ g: job.attempts, k: [last.line, last.seq] }) : null;
  return { metadata: { count: shown.length, nextPageToken }, data: shown.map(shape) };
}

/** The header of the rejected-rows file. */
export const REJECTED_ROWS_HEADER = 'line,property,message,originalText\r\n';

/**
 * The rejected-rows file of a job: CSV (RFC 4180, CRLF) of every defect in line order with the
 * text of its record, read a page at a time so memory stays flat. Undefined for an unknown job.
 */
export async function rejectedRowsCsv(
  db: Db,
  jobId: string,
): Promise<AsyncGenerator<string, void, undefined> | undefined> {
  const job = await db
    .selectFrom('dataset_jobs')
    .select(['id', 'attempts'])
    .where('id', '=', jobId)
    .executeTakeFirst();
  if (job === undefined) return undefined;
  return (async function* () {
    yield REJECTED_ROWS_HEADER;
    let after: ErrorPosition | null = null;
    let previous: DatasetJobErrorRow | undefined;
    let text = '';
    for (;;) {
      const rows = await errorsAfter(db, job.id, job.attempts, after, CSV_PAGE_ROWS);
      let out = '';
      for (const row of rows) {
        // null: another defect of the record before, whose text is on its first defect.
        const sameRecord =
          row.original_text === null && previous?.line === row.line && previous.seq === row.seq - 1;
        text = sameRecord ? text : (row.original_text ?? '');
        out += `${row.line},${csvField(row.property ?? '')},${csvField(row.message)},${csvField(text)}\r\n`;
        previous = row;
      }
      if (out !== '') yield out;
      if (rows.length < CSV_PAGE_ROWS || previous === undefined) return;
      after = [previous.line, previous.seq];
    }
  })();
}
