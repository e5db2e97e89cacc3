// The worker role's webhook deliverer: claims due deliveries from the outbox with a lease (so two
// workers never send one at once), signs and POSTs each to its app's endpoint under the address
// policy of records:load (redirects not followed), and records the attempt: delivered on a 2xx,
// else due again after an exponential backoff, until 24 hours after the event.
import { Counter, type Registry } from 'prom-client';
import type { WebhookDeliveryRow } from '../storage/db/tables.js';
import {
  claimDelivery,
  deliveryBody,
  recordAttempt,
  signatureHeader,
  type AttemptOutcome,
  type AttemptResult,
} from '../domain/webhooks/deliveries.js';
import { webhookSecret, WEBHOOK_ALLOWLIST_VAR } from '../domain/webhooks/webhooks.js';
import { FetchRefused, safePost, shownUrl } from '../net/safe-fetch.js';
import type { WorkerDeps } from './deps.js';

/** Deliveries in flight at once per worker process. */
const PARALLEL = 4;

/** A running deliverer; `close()` stops claiming and waits for the attempts under way. */
export interface WebhookDeliverer {
  close(): Promise<void>;
}

/** Starts the delivery loop of a worker whose lease owner is `owner`. */
export function startWebhookDeliverer(deps: WorkerDeps, owner: string): WebhookDeliverer {
  const stop = new AbortController();
  const inFlight = new Set<Promise<void>>();
  const outcomes = deliveriesCounter(deps.metrics);
  const claim = {
    owner,
    // An attempt ends within the timeout; the margin covers the writes around it.
    leaseMs: deps.config.webhooks.timeoutMs * 2 + 5000,
    skipLocked: deps.database.capabilities.skipLocked,
  };

  const loop = async () => {
    while (!stop.signal.aborted) {
      try {
        while (inFlight.size < PARALLEL && !stop.signal.aborted) {
          const delivery = await claimDelivery(deps.database.db, claim);
          if (delivery === undefined) break;
          const p: Promise<void> = attempt(deps, delivery, owner)
            .then((outcome) => outcomes.inc({ event: delivery.event, outcome }))
            .catch((err: unknown) =>
              deps.log.error({ err, deliveryId: delivery.id }, 'webhook delivery could not be recorded'),
            )
            .finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
      } catch (err) {
        deps.log.error({ err }, 'webhook deliverer round failed; retrying');
      }
      // Woken early when a job ends in this process (its delivery is due at once).
      await (inFlight.size >= PARALLEL
        ? Promise.race(inFlight)
        : deps.notifier.wait(deps.config.workerPollMs, stop.signal));
    }
  };
  const running = loop();
  return {
    async close() {
      stop.abort();
      await running;
      await Promise.all(inFlight);
    },
  };
}

/** Sends one claimed delivery and records how it went. */
async function attempt(
  deps: WorkerDeps,
  delivery: WebhookDeliveryRow,
  owner: string,
): Promise<AttemptOutcome> {
  const db = deps.database.db;
  const result = await send(deps, delivery);
  const outcome = await recordAttempt(db, delivery, owner, result, deps.config.webhooks.retryBaseMs);
  const fields = {
    deliveryId: delivery.id,
    event: delivery.event,
    jobId: delivery.job_id,
    datasetId: delivery.dataset_id,
    appId: delivery.app_id,
    attempt: delivery.attempts,
    statusCode: result.statusCode,
    outcome,
  };
  if (result.ok) deps.log.info(fields, 'webhook delivered');
  else deps.log.warn({ ...fields, error: result.error }, 'webhook delivery failed');
  return outcome;
}

async function send(deps: WorkerDeps, delivery: WebhookDeliveryRow): Promise<AttemptResult> {
  const db = deps.database.db;
  const hook = await db
    .selectFrom('app_webhooks')
    .selectAll()
    .where('app_id', '=', delivery.app_id)
    .executeTakeFirst();
  if (hook === undefined)
    return { ok: false, statusCode: null, error: 'the app has no webhook', final: true };
  let secret: string;
  try {
    secret = webhookSecret(hook, deps.signingSecret);
  } catch {
    return {
      ok: false,
      statusCode: null,
      error: 'the webhook secret cannot be read (SIGNING_SECRET changed?); set the webhook again',
      final: true,
    };
  }
  const signing = { publicUrl: deps.config.publicUrl, signingSecret: deps.signingSecret };
  const body = await deliveryBody(db, delivery, signing);
  if (body === null) return { ok: false, statusCode: null, error: 'the job no longer exists', final: true };
  try {
    const statusCode = await safePost(hook.url, {
      allowlist: deps.config.webhooks.urlAllowlist,
      allowName: WEBHOOK_ALLOWLIST_VAR,
      timeoutMs: deps.config.webhooks.timeoutMs,
      body,
      headers: {
        'content-type': 'application/json',
        'user-agent': 'dx-webhooks',
        'x-dx-event': delivery.event,
        'x-dx-delivery': delivery.id,
        'x-dx-signature-256': signatureHeader(secret, body),
      },
    });
    if (statusCode >= 200 && statusCode <= 299) return { ok: true, statusCode };
    return { ok: false, statusCode, error: `${shownUrl(hook.url)} answered HTTP ${statusCode}` };
  } catch (err) {
    if (!(err instanceof FetchRefused)) throw err;
    return { ok: false, statusCode: null, error: err.message };
  }
}

const DELIVERIES_METRIC = 'dx_webhook_deliveries_total';

/** The attempts counter, once per registry (a process may start more than one worker). */
function deliveriesCounter(registry: Registry): Counter<'event' | 'outcome'> {
  const existing = registry.getSingleMetric(DELIVERIES_METRIC);
  if (existing !== undefined) return existing as Counter<'event' | 'outcome'>;
  return new Counter({
    name: DELIVERIES_METRIC,
    help: 'Webhook delivery attempts by event and outcome (delivered, retrying, failed: given up)',
    labelNames: ['event', 'outcome'] as const,
    registers: [registry],
  });
}
