// Change-feed cursors: where a reader stands in a dataset's change log, bound to the dataset and the
// installation that read it, signed so a forged or edited cursor is refused (HMAC-SHA256 under a key
// derived from the signing secret, which every node shares: cursors work across processes and
// restarts, and a cursor of another deployment of the service does not verify).
import { problem } from '../../errors.js';
import { constantTimeEqual, deriveKey } from '../../lib/secrets.js';
import { createHmac } from 'node:crypto';
import type { KeysetPosition } from '../../storage/records/record-store.js';

/**
 * A position in the change log: every batch before `seq` is read; of batch `seq`, nothing when
 * `after` is null, else its event (a schema change) and its keys up to `after` (none when empty).
 */
export interface ChangePosition {
  seq: number;
  after: KeysetPosition | null;
}

/** Who a cursor was made for. */
export interface CursorOwner {
  datasetId: string;
  installationId: number;
}

/** The position after every change up to `generation`: where a read of that generation's
 * records leaves a reader, and the last page of the feed. */
export const afterGeneration = (generation: number): ChangePosition => ({ seq: generation + 1, after: null });

const PURPOSE = 'dx/changes-cursor/v1';

/** The cursor's text: base64url JSON of the owner and position, a dot, its signature. */
export function encodeCursor(secret: string, owner: CursorOwner, pos: ChangePosition): string {
  const body = Buffer.from(
    JSON.stringify({ d: owner.datasetId, i: owner.installationId, s: pos.seq, k: pos.after }),
  ).toString('base64url');
  return `${body}.${sign(secret, body)}`;
}

/** The position of a cursor made for `owner`; a 400 problem for anything else. */
export function decodeCursor(secret: string, owner: CursorOwner, cursor: string): ChangePosition {
  const [body, signature, extra] = cursor.split('.');
  if (
    body === undefined ||
    signature === undefined ||
    extra !== undefined ||
    !constantTimeEqual(signature, sign(secret, body))
  ) {
    throw invalidCursor('The cursor is not one this service issued (changed, truncated or forged).');
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('The cursor is not one this service issued.');
  }
  const { d, i, s, k } = (parsed ?? {}) as { d?: unknown; i?: unknown; s?: unknown; k?: unknown };
  if (d !== owner.datasetId) throw invalidCursor('The cursor belongs to another dataset.');
  if (i !== owner.installationId) throw invalidCursor('The cursor was issued to another installation.');
  if (typeof s !== 'number' || !Number.isSafeInteger(s) || s < 1)
    throw invalidCursor('The cursor is not valid.');
  if (
    k !== null &&
    !(Array.isArray(k) && k.every((v) => ['string', 'number', 'boolean'].includes(typeof v)))
  ) {
    throw invalidCursor('The cursor is not valid.');
  }
  return { seq: s, after: k as KeysetPosition | null };
}

/** The 400 problem of a cursor that is not this reader's. */
export function invalidCursor(detail: string): Error {
  return problem('invalid', detail, { code: 'changes_cursor_invalid', errors: { since: ['is not valid'] } });
}

function sign(secret: string, body: string): string {
  return createHmac('sha256', deriveKey(secret, PURPOSE)).update(body).digest('base64url');
}
