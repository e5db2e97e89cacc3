// The outbox of webhook deliveries: a job's final move writes the delivery for the app it was
// created through in the same transaction, so no event is lost to a crash between the two and none
// is sent for a move that rolled back; a commit that publishes a dataset's changes writes its
// dataset.changed deliveries likewise. The worker role sends them (worker/webhooks.ts).
import { randomUUID } from 'node:crypto';
import type { DatasetJobRow, JobStatus, WebhookEvent } from '../../storage/db/tables.js';
import type { Db } from '../identity/users.js';

/** What each event tells of: a job's end, or a dataset's commit (a new event fails to compile
 * until it says, and deliveryBody renders each). */
export const EVENT_SUBJECT = {
  'dataset.job.completed': 'job',
  'dataset.job.failed': 'job',
  'dataset.job.expired': 'job',
  'dataset.changed': 'dataset',
} as const satisfies Record<WebhookEvent, 'job' | 'dataset'>;

/** Retries stop this long after the event (or after a redelivery request). */
export const RETRY_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The event a final state raises; other states raise none. */
export const EVENT_OF_STATUS: Partial<Record<JobStatus, WebhookEvent>> = {
  Completed: 'dataset.job.completed',
  Failed: 'dataset.job.failed',
  Expired: 'dataset.job.expired',
};

/** Writes the delivery of a job's final move, if its app has a webhook that takes the event.
 * Runs inside the move's transaction. */
export async function enqueueJobEvent(
  trx: Db,
  job: DatasetJobRow,
  status: JobStatus,
  occurredAt: string,
): Promise<void> {
  const event = EVENT_OF_STATUS[status];
  if (event === undefined || job.installation_id === null) return;
  const hook = await trx
    .selectFrom('installations as i')
    .innerJoin('app_webhooks as w', 'w.app_id', 'i.app_id')
    .select(['w.app_id', 'w.events'])
    .where('i.id', '=', job.installation_id)
    .executeTakeFirst();
  if (hook === undefined || !(JSON.parse(hook.events) as string[]).includes(event)) return;
  await trx
    .insertInto('webhook_deliveries')
    .values({
      ...pendingDelivery(occurredAt),
      app_id: hook.app_id,
      installation_id: job.installation_id,
      workspace_id: job.workspace_id,
      job_id: job.id,
      event,
    })
    .execute();
}

/**
 * Writes a `dataset.changed` delivery for every installation whose app sees the dataset (of its
 * workspace and tagged with the app) and whose webhook takes the event: the commit of
 * `generation` (a load's, a schema change's) published changes. Runs inside the commit's
 * transaction, so a delivery exists exactly for the commits that happened.
 */
export async function enqueueDatasetChanged(
  trx: Db,
  datasetId: string,
  generation: number,
  occurredAt: string,
): Promise<void> {
  const hooks = await trx
    .selectFrom('datasets as d')
    .innerJoin('installations as i', 'i.workspace_id', 'd.workspace_id')
    .innerJoin('app_webhooks as w', 'w.app_id', 'i.app_id')
    .innerJoin('dataset_tags as t', (join) =>
      join.onRef('t.dataset_id', '=', 'd.id').onRef('t.app_id', '=', 'i.app_id'),
    )
    .select(['i.id as installation_id', 'w.app_id', 'w.events', 'd.workspace_id'])
    .where('d.id', '=', datasetId)
    .execute();
  const event: WebhookEvent = 'dataset.changed';
  for (const hook of hooks) {
    if (!(JSON.parse(hook.events) as string[]).includes(event)) continue;
    await trx
      .insertInto('webhook_deliveries')
      .values({
        ...pendingDelivery(occurredAt),
        app_id: hook.app_id,
        installation_id: hook.installation_id,
        workspace_id: hook.workspace_id,
        dataset_id: datasetId,
        generation,
        event,
      })
      .execute();
  }
}

/** A delivery due now, with its 24 hours of retries. */
function pendingDelivery(occurredAt: string) {
  const now = Date.now();
  return {
    id: randomUUID(),
    occurred_at: occurredAt,
    created_at: occurredAt,
    status: 'pending' as const,
    attempts: 0,
    next_attempt_at: now,
    give_up_at: now + RETRY_WINDOW_MS,
    lease_owner: null,
    lease_expires_at: null,
    last_attempt_at: null,
    last_status_code: null,
    last_error: null,
    delivered_at: null,
  };
}
