// What a records page request means: typed equality filters and an opaque page token tied to the
// dataset's generation (a token from before a replace cannot continue into the new records).
import { problem, type FieldErrors } from '../../errors.js';
import type { DatasetSchema, SchemaProperty } from '../datasets/schema.js';

export const MAX_PAGE_SIZE = 10_000;
export const DEFAULT_PAGE_SIZE = 100;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/** Decoded page token: the generation it belongs to and the keyset position after which to go on. */
export interface PageToken {
  g: number;
  k: (string | number | boolean)[];
}

/** Encodes a page token (base64url JSON: opaque to callers). */
export function encodePageToken(token: PageToken): string {
  return Buffer.from(JSON.stringify(token)).toString('base64url');
}

/** Decodes a page token or throws a 400 problem. */
export function decodePageToken(value: string, keyCount: number): PageToken {
  const bad = problem('invalid', 'The pageToken is not valid.', { errors: { pageToken: ['is not valid'] } });
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

/** Turns query parameters other than paging into typed filters; unknown properties are a 400. */
export function parseFilters(
  schema: DatasetSchema,
  query: Record<string, unknown>,
  booleansAsIntegers: boolean,
): [string, string | number | boolean][] {
  const errors: FieldErrors = {};
  const byName = new Map(schema.properties.map((p) => [p.name, p]));
  const filters: [string, string | number | boolean][] = [];
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
    const value = filterValue(p, raw, booleansAsIntegers);
    if (value === null) errors[name] = [`is not a valid ${p.type}`];
    else filters.push([name, value]);
  }
  if (Object.keys(errors).length > 0) throw problem('invalid', 'The record filters are invalid.', { errors });
  return filters;
}

function filterValue(
  p: SchemaProperty,
  raw: string,
  booleansAsIntegers: boolean,
): string | number | boolean | null {
  switch (p.type) {
    case 'integer': {
      if (!/^-?\d{1,19}$/.test(raw)) return null;
      const n = BigInt(raw);
      // Passed as text so values beyond 2^53 compare exactly; both engines convert it to the column type.
      return n >= INT64_MIN && n <= INT64_MAX ? n.toString() : null;
    }
    case 'boolean': {
      const l = raw.toLowerCase();
      const b = l === 'true' || l === '1' ? true : l === 'false' || l === '0' ? false : null;
      if (b === null) return null;
      return booleansAsIntegers ? (b ? 1 : 0) : b;
    }
    case 'number': {
      const n = Number(raw);
      return raw.trim() !== '' && Number.isFinite(n) ? n : null;
    }
    case 'string':
    case 'date':
    case 'datetime':
      return raw;
  }
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
