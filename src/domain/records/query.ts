// What a records page request means: typed equality filters and an opaque page token tied to the
// dataset's generation (a token from before a replace cannot continue into the new records).
import { problem, type FieldErrors } from '../../errors.js';
import type { CellValue, KeysetPosition } from '../../storage/records/record-store.js';
import { COLUMN_TYPES } from '../datasets/column-types.js';
import type { DatasetSchema } from '../datasets/schema.js';

export const MAX_PAGE_SIZE = 10_000;
export const DEFAULT_PAGE_SIZE = 100;

/** Decoded page token: the generation it belongs to and the keyset position after which to go on. */
export interface PageToken {
  g: number;
  k: KeysetPosition;
}

/** Encodes a page token (base64url JSON: opaque to callers). */
export function encodePageToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** Decodes a page token or throws a 400 problem. */
export function decodePageToken(value: string, keyCount: number): PageToken {
  const bad = invalidPageToken();
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(value, 'base64url').toString('utf8'));
  } catch {
    throw bad;
  }
  if (typeof parsed !== 'object' || parsed === null) throw bad;
  const { g, k } = parsed as { g?: unknown; k?: unknown };
  if (typeof g !== 'number' || !Number.isSafeInteger(g) || !Array.isArray(k) || k.length !== keyCount)
    throw bad;
  if (!k.every((v) => ['string', 'number', 'boolean'].includes(typeof v))) throw bad;
  return { g, k: k as PageToken['k'] };
}

/** The 400 problem of a page token that is not one of ours. */
export function invalidPageToken(): Error {
  return problem('invalid', 'The pageToken is not valid.', {
    code: 'page_token_invalid',
    errors: { pageToken: ['is not valid'] },
  });
}

/** The (created_at, id) position after which a newest-first list resumes, or null without a
 * pageToken; a token of another shape is a 400. */
export function timeAndIdAfter(pageToken: unknown): [string, string] | null {
  if (typeof pageToken !== 'string' || pageToken === '') return null;
  const [createdAt, id] = decodePageToken(pageToken, 2).k;
  if (typeof createdAt !== 'string' || typeof id !== 'string') throw invalidPageToken();
  return [createdAt, id];
}

/** Turns query parameters other than paging into typed filters; unknown properties are a 400. */
export function parseFilters(
  schema: DatasetSchema,
  query: Record<string, unknown>,
): [string, Exclude<CellValue, null>][] {
  const errors: FieldErrors = {};
  const byName = new Map(schema.properties.map((p) => [p.name, p]));
  const filters: [string, Exclude<CellValue, null>][] = [];
  for (const [name, raw] of Object.entries(query)) {
    if (name === 'pageSize' || name === 'pageToken') continue;
    const p = byName.get(name);
    if (p === undefined) {
      errors[name] = ['is not a property of the dataset'];
      continue;
    }
    if (typeof raw !== 'string') {
      errors[name] = ['may be given once'];
      continue;
    }
    const value = COLUMN_TYPES[p.type].fromFilter(raw);
    if (value === undefined) errors[name] = [`is not a valid ${p.type}`];
    else filters.push([name, value]);
  }
  if (Object.keys(errors).length > 0) throw problem('invalid', 'The record filters are invalid.', { errors });
  return filters;
}

/** Validates pageSize (1..10000, default 100). */
export function parsePageSize(raw: unknown): number {
  if (raw === undefined) return DEFAULT_PAGE_SIZE;
  const n = typeof raw === 'string' && /^\d{1,6}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= 1 && n <= MAX_PAGE_SIZE)) {
    throw problem('invalid', `pageSize must be an integer from 1 to ${MAX_PAGE_SIZE}.`, {
      errors: { pageSize: [`must be from 1 to ${MAX_PAGE_SIZE}`] },
    });
  }
  return n;
}
