// An app's webhook (#13): one endpoint per app, set with its JWT or by the operator. The signing
// secret is shown once, when set; it is kept sealed (lib/secrets.ts, bound to its app) because every delivery needs it
// to sign, so it cannot be stored as a hash like the service's other secrets.
import { WEBHOOK_EVENTS, type AppWebhookRow, type WebhookEvent } from '../../storage/db/tables.js';
import { EVENT_SUBJECT } from './outbox.js';
import { problem } from '../../errors.js';
import { deriveKey, randomSecret, seal, unseal } from '../../lib/secrets.js';
import { nowTimestamp } from '../../lib/time.js';
import { checkDestination, FetchRefused } from '../../net/safe-fetch.js';
import type { Db } from '../identity/users.js';

export { WEBHOOK_EVENTS, type WebhookEvent };

/** The variable that lists internal destinations the operator allows. */
export const WEBHOOK_ALLOWLIST_VAR = 'WEBHOOK_URL_ALLOWLIST';

/** The webhook as GET shows it (never its secret). */
export interface Webhook {
  url: string;
  events: WebhookEvent[];
  dateCreated: string;
  dateUpdated: string;
}

/** The answer of PUT: the webhook with its new secret, shown only now. */
export interface WebhookWithSecret extends Webhook {
  secret: string;
}

/** The key that seals webhook secrets, from the service's signing secret. */
export function webhookSecretKey(signingSecret: string): Buffer {
  return deriveKey(signingSecret, 'dx/webhook-secret/v1');
}

/** What a sealed secret is bound to: its app (a sealed value copied to another app's row fails). */
const sealContext = (appId: string) => `app:${appId}`;

/** Sets (or replaces) the app's webhook with a new secret; the URL must be a destination the
 * service may reach (the address policy of records:load, with WEBHOOK_URL_ALLOWLIST). */
export async function setWebhook(
  db: Db,
  appId: string,
  url: string,
  opts: { signingSecret: string; allowlist: readonly string[]; events?: readonly string[] },
): Promise<WebhookWithSecret> {
  const chosen = chosenEvents(opts.events);
  if (url.length > 2048) {
    throw problem('invalid', 'The url is too long.', {
      errors: { url: ['must be at most 2048 characters'] },
    });
  }
  try {
    const parsed = await checkDestination(url, opts.allowlist, WEBHOOK_ALLOWLIST_VAR);
    if (parsed.username !== '' || parsed.password !== '')
      throw new FetchRefused('the URL may not hold credentials');
  } catch (err) {
    if (!(err instanceof FetchRefused)) throw err;
    throw problem('invalid', `The webhook URL is refused: ${err.message}.`, {
      errors: { url: [err.message] },
    });
  }
  const app = await db.selectFrom('apps').select('id').where('id', '=', appId).executeTakeFirst();
  if (app === undefined) throw problem('notFound', `App ${appId} not found.`);
  const secret = randomSecret('whsec_');
  const now = nowTimestamp();
  const events = JSON.stringify(chosen);
  const sealed = seal(webhookSecretKey(opts.signingSecret), secret, sealContext(appId));
  const row = await db
    .insertInto('app_webhooks')
    .values({ app_id: appId, url, secret_sealed: sealed, events, created_at: now, updated_at: now })
    .onConflict((oc) =>
      oc.column('app_id').doUpdateSet({ url, secret_sealed: sealed, events, updated_at: now }),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...viewWebhook(row), secret };
}

/** The events a webhook set without `events` takes: the job events, as before dataset.changed
 * existed (a webhook set then keeps its list; dataset.changed, one delivery per commit, is asked
 * for by name). */
export const DEFAULT_WEBHOOK_EVENTS: readonly WebhookEvent[] = WEBHOOK_EVENTS.filter(
  (e) => EVENT_SUBJECT[e] === 'job',
);

/** The events an app asked for, in their canonical order; the job events when it named none. */
function chosenEvents(requested: readonly string[] | undefined): WebhookEvent[] {
  if (requested === undefined) return [...DEFAULT_WEBHOOK_EVENTS];
  const unknown = requested.filter((e) => !(WEBHOOK_EVENTS as readonly string[]).includes(e));
  if (unknown.length > 0 || requested.length === 0) {
    const fix =
      unknown.length > 0
        ? `unknown: ${unknown.join(', ')}`
        : 'name at least one event, or leave events out for the job events';
    throw problem('invalid', `Webhook events ${fix}; choose among ${WEBHOOK_EVENTS.join(', ')}.`, {
      errors: { events: [fix] },
    });
  }
  return WEBHOOK_EVENTS.filter((e) => requested.includes(e));
}

/** The app's webhook, or a 404 problem. */
export async function getWebhook(db: Db, appId: string): Promise<Webhook> {
  return viewWebhook(await webhookRow(db, appId));
}

/** The stored webhook of an app, or a 404 problem. */
export async function webhookRow(db: Db, appId: string): Promise<AppWebhookRow> {
  const row = await db.selectFrom('app_webhooks').selectAll().where('app_id', '=', appId).executeTakeFirst();
  if (row === undefined) throw problem('notFound', 'The app has no webhook.');
  return row;
}

/** Removes the app's webhook and its deliveries (sent or not); a 404 problem when it has none. */
export async function removeWebhook(db: Db, appId: string): Promise<void> {
  // Deliveries go explicitly too: both engines, whatever their foreign-key settings.
  await db.deleteFrom('webhook_deliveries').where('app_id', '=', appId).execute();
  const res = await db.deleteFrom('app_webhooks').where('app_id', '=', appId).executeTakeFirst();
  if (Number(res.numDeletedRows) === 0) throw problem('notFound', 'The app has no webhook.');
}

/** The secret of a stored webhook. */
export function webhookSecret(row: AppWebhookRow, signingSecret: string): string {
  const secret = unseal(webhookSecretKey(signingSecret), row.secret_sealed, sealContext(row.app_id));
  // SIGNING_SECRET changed since the webhook was set (or the row was altered).
  if (secret === null) throw new Error('the webhook secret cannot be unsealed');
  return secret;
}

function viewWebhook(row: AppWebhookRow): Webhook {
  return {
    url: row.url,
    events: JSON.parse(row.events) as WebhookEvent[],
    dateCreated: row.created_at,
    dateUpdated: row.updated_at,
  };
}
