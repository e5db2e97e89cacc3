// The outbox of webhook deliveries: a job's final move writes the delivery for the app it was
// created through in the same transaction, so no event is lost to a crash between the two and none
// is sent for a move that rolled back. The worker role sends them (worker/webhooks.ts).
import { randomUUID } from 'node:crypto';
import type { DatasetJobRow, JobStatus, WebhookEvent } from '../../storage/db/tables.js';
import type { Db } from '../identity/users.js';

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
  const now = Date.now();
  await trx
    .insertInto('webhook_deliveries')
    .values({
      id: randomUUID(),
      app_id: hook.app_id,
      installation_id: job.installation_id,
      workspace_id: job.workspace_id,
      job_id: job.id,
      event,
      occurred_at: occurredAt,
      created_at: occurredAt,
      status: 'pending',
      attempts: 0,
      next_attempt_at: now,
      give_up_at: now + RETRY_WINDOW_MS,
      lease_owner: null,
      lease_expires_at: null,
      last_attempt_at: null,
      last_status_code: null,
      last_error: null,
      delivered_at: null,
    })
    .execute();
}
