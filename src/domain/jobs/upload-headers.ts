// The two request headers that shape an upload: Content-Type (which parser reads the file) and
// Content-Range (which bytes of the file a PUT carries, as a Google Cloud Storage resumable session
// reads it: https://cloud.google.com/storage/docs/performing-resumable-uploads).
import type { DatasetJobRow } from '../../storage/db/tables.js';
import { problem, type ProblemError } from '../../errors.js';
import type { ContentType } from './status.js';

/** Media types an upload may be sent with, and the format each one means (null: the declared one). */
const UPLOAD_MEDIA_TYPES: Record<string, ContentType | null> = {
  'text/csv': 'csv',
  'application/json': 'json',
  // The JSON reader takes an array of objects or newline-delimited objects alike.
  'application/x-ndjson': 'json',
  'text/tab-separated-values': 'tsv',
  'application/octet-stream': null,
  'application/gzip': null,
  '': null,
};

/** The media types an upload may be sent with, for error messages and docs. */
export const UPLOAD_MEDIA_TYPE_NAMES = Object.keys(UPLOAD_MEDIA_TYPES).filter((t) => t !== '');

/** The format a PUT's Content-Type names; null for a generic type or none. 415 for any other. */
export function formatNamedBy(contentTypeHeader: string | undefined): ContentType | null {
  const mediaType = (contentTypeHeader ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  const format = UPLOAD_MEDIA_TYPES[mediaType];
  if (format === undefined) {
    throw problem(
      'unsupportedMediaType',
      `Upload Content-Type must be one of ${UPLOAD_MEDIA_TYPE_NAMES.join(', ')} (or left out).`,
    );
  }
  return format;
}

/**
 * The format a PUT's Content-Type asks for: a specific type decides, a generic one (or none) leaves
 * the format declared when the URL was made.
 */
export function formatOfUpload(contentTypeHeader: string | undefined, declared: ContentType): ContentType {
  return formatNamedBy(contentTypeHeader) ?? declared;
}

/** What a PUT's Content-Range says it carries. */
export type ContentRange =
  /** No header: the whole file in this one request. */
  | { kind: 'whole' }
  // `bytes *` + `/TOTAL` (or `/*`), with no body: where does the session stand?
  | { kind: 'query'; total: number | null }
  /** `bytes START-END/TOTAL` (TOTAL `*` while unknown): bytes START to END inclusive. */
  | { kind: 'slice'; start: number; end: number; total: number | null };

const RANGE = /^bytes\s+(?:(\d{1,15})-(\d{1,15})|(\*))\/(\d{1,15}|\*)$/i;

/** Reads a Content-Range header; 400 naming the header when it is not of the forms above. */
export function parseContentRange(header: string | undefined): ContentRange {
  if (header === undefined || header.trim() === '') return { kind: 'whole' };
  const m = RANGE.exec(header.trim());
  const invalid = contentRangeProblem;
  if (m === null) throw invalid('must be "bytes START-END/TOTAL", "bytes START-END/*" or "bytes */TOTAL"');
  const total = m[4] === '*' ? null : Number(m[4]);
  if (m[3] === '*') return { kind: 'query', total };
  const start = Number(m[1]);
  const end = Number(m[2]);
  if (end < start) throw invalid('names an end before its start');
  if (total !== null && end >= total) throw invalid('names bytes beyond the total');
  return { kind: 'slice', start, end, total };
}

/** A 400 naming the Content-Range header and why it cannot be taken. */
export function contentRangeProblem(why: string): ProblemError {
  return problem('invalid', `The Content-Range header ${why}.`, { errors: { 'Content-Range': [why] } });
}

/** Why a file over UPLOAD_MAX_BYTES was refused (a 413 on receipt, a failed job on arrival). */
export function fileTooLargeMessage(maxBytes: number): string {
  return `The file is larger than the limit of ${maxBytes} bytes (UPLOAD_MAX_BYTES).`;
}

/** The format asked for with the upload URL. */
export function declaredFormat(job: Pick<DatasetJobRow, 'content_type'>): ContentType {
  return job.content_type ?? 'csv';
}

/** The Range header of a resumable session's answer: the persisted prefix, or none when empty. */
export function persistedRange(received: number): string | null {
  return received > 0 ? `bytes=0-${received - 1}` : null;
}
