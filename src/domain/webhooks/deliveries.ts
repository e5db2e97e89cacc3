// Webhook deliveries (the outbox written by outbox.ts): claimed by one worker at a time with a
// lease (as jobs are, domain/jobs/claims.ts), sent, and retried with exponential backoff until 24
// hours after the event; listed and redelivered by the app.
import { createHmac } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DeliveryStatus, Tables, WebhookDeliveryRow, WebhookEvent } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { formatMicros, nowTimestamp } from '../../lib/time.js';
import type { Db } from '../identity/users.js';
import { encodePageToken, parsePageSize, timeAndIdAfter } from '../records/query.js';
import { viewJobs, type Job } from '../jobs/view.js';
import type { LinkSigning } from '../jobs/rejected-rows-link.js';
import { afterGeneration, encodeCursor } from '../changes/cursor.js';
import { EVENT_SUBJECT, RETRY_WINDOW_MS } from './outbox.js';

/** The longest wait between two attempts. */
export const MAX_BACKOFF_MS = 60 * 60 * 1000;

/** The body of a delivery (its JSON is what the signature covers): a job's end, with the job, or
 * dataset.changed, with the dataset and the change-feed cursor after the commit. */
export type WebhookBody = DeliveryHeader & ({ job: Job } | { datasetId: string; changesCursor: string });

interface DeliveryHeader {
  event: WebhookEvent;
  deliveryId: string;
  occurredAt: string;
  installationId: number;
  workspaceId: number;
}

/** A delivery as the app's list shows it. */
export interface Delivery {
  deliveryId: string;
  event: WebhookEvent;
  /** The job of a job event; null for dataset.changed. */
  jobId: string | null;
  /** The dataset of dataset.changed; null for a job event. */
  datasetId: string | null;
  installationId: number;
  workspaceId: number;
  occurredAt: string;
  status: DeliveryStatus;
  attempts: number;
  /** When the next attempt is due (pending only). */
  nextAttemptAt: string | null;
  lastAttemptAt: string | null;
  lastStatusCode: number | null;
  lastError: string | null;
  deliveredAt: string | null;
}

/** `sha256=<hex HMAC-SHA256(secret, body)>`: the X-DX-Signature-256 header. */
export function signatureHeader(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

/** The wait before attempt `attempts + 1`: base, 2×base, 4×base … up to an hour. */
export function backoffMs(baseMs: number, attempts: number): number {
  return Math.min(MAX_BACKOFF_MS, baseMs * 2 ** Math.max(0, attempts - 1));
}

/** Up to this share of each wait is random, so deliveries that failed together (one receiver down)
 * do not all come back in the same second. */
export const BACKOFF_JITTER = 0.2;

/** `ms` less a random part of up to BACKOFF_JITTER of it: never later than the plain backoff, so
 * the 24-hour budget is kept. */
export function jittered(ms: number, random: () => number = Math.random): number {
  return Math.round(ms * (1 - BACKOFF_JITTER * random()));
}

/** Claims the oldest due delivery for `owner` until now + leaseMs (counting an attempt), or
 * returns undefined. The guards are repeated on the row itself, so of two claimers racing for it
 * only one updates it (PostgreSQL re-checks them on the locked row); SKIP LOCKED lets them pass
 * over each other instead of waiting. */
export async function claimDelivery(
  db: Kysely<Tables>,
  opts: { owner: string; leaseMs: number; skipLocked: boolean },
): Promise<WebhookDeliveryRow | undefined> {
  const now = Date.now();
  return db
    .updateTable('webhook_deliveries')
    .set((eb) => ({
      lease_owner: opts.owner,
      lease_expires_at: now + opts.leaseMs,
      attempts: eb('attempts', '+', 1),
    }))
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
    .where('id', '=', (eb) =>
      eb
        .selectFrom('webhook_deliveries')
        .select('id')
        .where('status', '=', 'pending')
        .where('next_attempt_at', '<=', now)
        .where((w) => w.or([w('lease_expires_at', 'is', null), w('lease_expires_at', '<', now)]))
        .orderBy('next_attempt_at')
        .limit(1)
        .$if(opts.skipLocked, (qb) => qb.forUpdate().skipLocked()),
    )
    .returningAll()
    .executeTakeFirst();
}

/** The body of a claimed delivery, or null when what it tells of is gone (its dataset was
 * deleted). A job's view is read at each attempt: a final job does not change, and its
 * rejected-rows link is signed afresh. */
export async function deliveryBody(
  db: Db,
  delivery: WebhookDeliveryRow,
  signing: LinkSigning,
): Promise<string | null> {
  const header: DeliveryHeader = {
    event: delivery.event,
    deliveryId: delivery.id,
    occurredAt: delivery.occurred_at,
    installationId: Number(delivery.installation_id),
    workspaceId: Number(delivery.workspace_id),
  };
  switch (EVENT_SUBJECT[delivery.event]) {
    case 'job': {
      if (delivery.job_id === null) return null;
      const row = await db
        .selectFrom('dataset_jobs')
        .selectAll()
        .where('id', '=', delivery.job_id)
        .executeTakeFirst();
      if (row === undefined) return null;
      const [job] = await viewJobs(db, [row], signing);
      if (job === undefined) return null;
      const body: WebhookBody = { ...header, job };
      return JSON.stringify(body);
    }
    case 'dataset': {
      if (delivery.dataset_id === null || delivery.generation === null) return null;
      const exists = await db
        .selectFrom('datasets')
        .select('id')
        .where('id', '=', delivery.dataset_id)
        .executeTakeFirst();
      if (exists === undefined) return null;
      const owner = { datasetId: delivery.dataset_id, installationId: header.installationId };
      const changesCursor = encodeCursor(
        signing.signingSecret,
        owner,
        afterGeneration(Number(delivery.generation)),
      );
      const body: WebhookBody = { ...header, datasetId: delivery.dataset_id, changesCursor };
      return JSON.stringify(body);
    }
  }
}

/** What an attempt came to. */
export type AttemptResult =
  { ok: true; statusCode: number } | { ok: false; statusCode: number | null; error: string; final?: boolean };

/** How a recorded attempt leaves the delivery. */
export type AttemptOutcome = 'delivered' | 'retrying' | 'failed';

/** Records an attempt of the delivery this worker holds: delivered, due again after the backoff,
 * or failed once the next attempt would fall after its 24 hours. */
export async function recordAttempt(
  db: Kysely<Tables>,
  delivery: WebhookDeliveryRow,
  owner: string,
  result: AttemptResult,
  retryBaseMs: number,
): Promise<AttemptOutcome> {
  const now = Date.now();
  const stamp = nowTimestamp();
  const release = { lease_owner: null, lease_expires_at: null, last_attempt_at: stamp };
  let outcome: AttemptOutcome;
  let q;
  if (result.ok) {
    outcome = 'delivered';
    q = db.updateTable('webhook_deliveries').set({
      ...release,
      status: 'delivered',
      last_status_code: result.statusCode,
      last_error: null,
      delivered_at: stamp,
    });
  } else {
    const next = now + jittered(backoffMs(retryBaseMs, delivery.attempts));
    outcome = result.final === true || next > delivery.give_up_at ? 'failed' : 'retrying';
    q = db.updateTable('webhook_deliveries').set({
      ...release,
      status: outcome === 'failed' ? 'failed' : 'pending',
      next_attempt_at: next,
      last_status_code: result.statusCode,
      last_error: result.error.slice(0, 500),
    });
  }
  await q.where('id', '=', delivery.id).where('lease_owner', '=', owner).execute();
  return outcome;
}

/** The app's deliveries, newest first, a page at a time. */
export async function listDeliveries(
  db: Db,
  appId: string,
  query: { pageSize?: unknown; pageToken?: unknown },
): Promise<{ metadata: { count: number; nextPageToken: string | null }; data: Delivery[] }> {
  const pageSize = parsePageSize(query.pageSize);
  const after = timeAndIdAfter(query.pageToken);
  const rows = await db
    .selectFrom('webhook_deliveries')
    .selectAll()
    .where('app_id', '=', appId)
    .$if(after !== null, (qb) =>
      qb.where((eb) => {
        const [c, id] = after as [string, string];
        return eb.or([eb('created_at', '<', c), eb.and([eb('created_at', '=', c), eb('id', '<', id)])]);
      }),
    )
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(pageSize + 1)
    .execute();
  const more = rows.length > pageSize;
  const shown = more ? rows.slice(0, pageSize) : rows;
  const last = shown.at(-1);
  const nextPageToken =
    more && last !== undefined ? encodePageToken({ g: 0, k: [last.created_at, last.id] }) : null;
  return { metadata: { count: shown.length, nextPageToken }, data: shown.map(viewDelivery) };
}

/** Sends one of the app's deliveries again, as soon as a worker can, with 24 more hours of retries. */
export async function redeliver(db: Db, appId: string, deliveryId: string): Promise<Delivery> {
  const now = Date.now();
  const row = await db
    .updateTable('webhook_deliveries')
    .set({ status: 'pending', next_attempt_at: now, give_up_at: now + RETRY_WINDOW_MS })
    .where('id', '=', deliveryId)
    .where('app_id', '=', appId)
    .returningAll()
    .executeTakeFirst();
  if (row === undefined) throw problem('notFound', `Delivery ${deliveryId} not found.`);
  return viewDelivery(row);
}

export function viewDelivery(row: WebhookDeliveryRow): Delivery {
  return {
    deliveryId: row.id,
    event: row.event,
    jobId: row.job_id,
    datasetId: row.dataset_id,
    installationId: Number(row.installation_id),
    workspaceId: Number(row.workspace_id),
    occurredAt: row.occurred_at,
    status: row.status,
    attempts: Number(row.attempts),
    nextAttemptAt: row.status === 'pending' ? formatMicros(BigInt(row.next_attempt_at) * 1000n) : null,
    lastAttemptAt: row.last_attempt_at,
    lastStatusCode: row.last_status_code === null ? null : Number(row.last_status_code),
    lastError: row.last_error,
    deliveredAt: row.delivered_at,
  };
}
