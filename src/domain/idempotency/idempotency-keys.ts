// Idempotent requests (#12): a request sent with an `Idempotency-Key` is handled once per
// installation and key; a retry within 24 hours gets the first answer again. The rules live here,
// free of HTTP: what a key may be, how a request is fingerprinted, and the claim on a key, kept in
// the database so it holds across restarts and across API processes.
import { createHash, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { IdempotencyKeyRow, Tables } from '../../storage/db/tables.js';

type Db = Kysely<Tables>;

/** 1 to 255 visible ASCII characters (%x21-7E): no spaces, no control or non-ASCII characters. */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7E]{1,255}$/;

/** How long a key remembers its first answer, counted from the first request. */
export const IDEMPOTENCY_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * How long a claim may stay unanswered before another request takes the key over. The three
 * routes answer in milliseconds; a claim this old belongs to a process that died mid-request.
 */
export const IDEMPOTENCY_LEASE_MS = 2 * 60 * 1000;

/** Expired keys deleted by one sweep at most, so one sweep stays short however many piled up. */
export const IDEMPOTENCY_SWEEP_BATCH = 1000;

/** Claims tried before giving up as "in progress" when other requests keep racing for the key. */
const CLAIM_ATTEMPTS = 4;

/** Whether a header value is a valid key. */
export function isValidIdempotencyKey(value: string): boolean {
  return IDEMPOTENCY_KEY_PATTERN.test(value);
}

/** What makes two requests the same request: everything that changes what it does. */
export interface RequestShape {
  method: string;
  /** The route's path template, such as `/api/v1/datasets/:id/uploadUrl`. */
  route: string;
  /** Path parameters, query and body as the route's schemas accepted them (defaults applied). */
  params: unknown;
  query: unknown;
  body: unknown;
}

/**
 * Hex SHA-256 of the request. The parsed, validated values are hashed in a canonical JSON form
 * (object keys sorted), so a retry that serialises the same body differently (key order,
 * whitespace) or spells out a default (`?mode=create`) is still the same request.
 */
export function requestFingerprint(shape: RequestShape): string {
  const canonical = canonicalJson([
    shape.method.toUpperCase(),
    shape.route,
    shape.params ?? {},
    shape.query ?? {},
    shape.body ?? null,
  ]);
  return createHash('sha256').update(canonical).digest('hex');
}

/** JSON with object keys in sorted order; the values are parsed JSON (no dates, maps or cycles). */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** A key held by one request while it is handled; only its holder may answer or release it. */
export interface Claim {
  installationId: number;
  key: string;
  holder: string;
}

/** The first answer, as sent. */
export interface StoredAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** What a request with a key may do: run (it holds the claim), replay, or be refused. */
export type ClaimOutcome =
  | { kind: 'claimed'; claim: Claim }
  | { kind: 'replay'; answer: StoredAnswer }
  | { kind: 'inProgress' }
  | { kind: 'mismatch' };

/**
 * Claims `key` for one request of `installationId`. The insert is the claim (the primary key lets
 * one of two racing requests in); a row already there is replayed, refused, or taken over when it
 * is older than the window or its claim lapsed, by a compare-and-swap on its holder.
 */
export async function claimIdempotencyKey(
  db: Db,
  installationId: number,
  key: string,
  fingerprint: string,
  now = Date.now(),
): Promise<ClaimOutcome> {
  for (let attempt = 0; attempt < CLAIM_ATTEMPTS; attempt++) {
    const claim: Claim = { installationId, key, holder: randomUUID() };
    const inserted = await db
      .insertInto('idempotency_keys')
      .values({
        installation_id: installationId,
        key,
        fingerprint,
        holder: claim.holder,
        created_at: now,
        lease_expires_at: now + IDEMPOTENCY_LEASE_MS,
      })
      .onConflict((oc) => oc.columns(['installation_id', 'key']).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 1) return { kind: 'claimed', claim };

    const row = await db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('installation_id', '=', installationId)
      .where('key', '=', key)
      .executeTakeFirst();
    if (row === undefined) continue; // deleted (expired) between the insert and the read
    const verdict = judge(row, fingerprint, now);
    if (verdict.kind !== 'takeOver') return verdict;
    if (await takeOver(db, row, claim, fingerprint, now)) return { kind: 'claimed', claim };
  }
  return { kind: 'inProgress' };
}

/** What an existing row means for a new request with the same key. */
function judge(
  row: IdempotencyKeyRow,
  fingerprint: string,
  now: number,
): Exclude<ClaimOutcome, { kind: 'claimed' }> | { kind: 'takeOver' } {
  // Past the window the key is forgotten: the request is a new one, whatever it is.
  if (row.created_at <= now - IDEMPOTENCY_WINDOW_MS) return { kind: 'takeOver' };
  if (row.fingerprint !== fingerprint) return { kind: 'mismatch' };
  if (row.response_status !== null) {
    return {
      kind: 'replay',
      answer: {
        status: row.response_status,
        contentType: row.response_type ?? 'application/json; charset=utf-8',
        body: row.response_body ?? '',
      },
    };
  }
  if (row.lease_expires_at !== null && row.lease_expires_at > now) return { kind: 'inProgress' };
  return { kind: 'takeOver' };
}

/** Replaces `row` with a fresh claim, unless another request changed it first. */
async function takeOver(
  db: Db,
  row: IdempotencyKeyRow,
  claim: Claim,
  fingerprint: string,
  now: number,
): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      fingerprint,
      holder: claim.holder,
      created_at: now,
      lease_expires_at: now + IDEMPOTENCY_LEASE_MS,
      response_status: null,
      response_type: null,
      response_body: null,
    })
    .where('installation_id', '=', row.installation_id)
    .where('key', '=', row.key)
    .where('holder', '=', row.holder)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/**
 * Keeps the answer for replays and ends the claim. False when the claim was lost (its lease
 * lapsed and another request took the key over): that request's answer is the one kept.
 */
export async function recordAnswer(db: Db, claim: Claim, answer: StoredAnswer): Promise<boolean> {
  const result = await db
    .updateTable('idempotency_keys')
    .set({
      response_status: answer.status,
      response_type: answer.contentType,
      response_body: answer.body,
      lease_expires_at: null,
    })
    .where('installation_id', '=', claim.installationId)
    .where('key', '=', claim.key)
    .where('holder', '=', claim.holder)
    .where('response_status', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

/** Gives the key up without an answer (the request failed): a retry runs the request again. */
export async function releaseClaim(db: Db, claim: Claim): Promise<void> {
  await db
    .deleteFrom('idempotency_keys')
    .where('installation_id', '=', claim.installationId)
    .where('key', '=', claim.key)
    .where('holder', '=', claim.holder)
    .execute();
}

/** Deletes keys past the window, oldest first, at most `limit`; returns how many. */
export async function deleteExpiredIdempotencyKeys(
  db: Db,
  now: number,
  limit = IDEMPOTENCY_SWEEP_BATCH,
): Promise<number> {
  const cutoff = now - IDEMPOTENCY_WINDOW_MS;
  const result = await db
    .deleteFrom('idempotency_keys')
    .where((eb) =>
      eb(
        eb.refTuple('installation_id', 'key'),
        'in',
        eb
          .selectFrom('idempotency_keys')
          .select(['installation_id', 'key'])
          .where('created_at', '<=', cutoff)
          .orderBy('created_at')
          .limit(limit)
          .$asTuple('installation_id', 'key'),
      ),
    )
    // Checked again outside the batch: a key taken over since the select is new, not expired.
    .where('created_at', '<=', cutoff)
    .executeTakeFirst();
  return Number(result.numDeletedRows);
}
