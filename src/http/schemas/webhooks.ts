// Schemas of an app's webhook and its deliveries (#13).
import { Type } from 'typebox';
import { DELIVERY_STATUSES, WEBHOOK_EVENTS } from '../../storage/db/tables.js';
import { Timestamp } from './common.js';
import { component, ref } from './components.js';
import { PageQueryFields } from './jobs.js';

const Event = Type.Unsafe<(typeof WEBHOOK_EVENTS)[number]>({ type: 'string', enum: [...WEBHOOK_EVENTS] });

export const SetWebhookBody = component(
  'SetWebhookRequest',
  Type.Object({
    url: Type.String({
      minLength: 1,
      maxLength: 2048,
      description: 'http(s) URL the deliveries are POSTed to; internal addresses need WEBHOOK_URL_ALLOWLIST',
    }),
    events: Type.Optional(
      Type.Array(Event, {
        minItems: 1,
        uniqueItems: true,
        description:
          'The events to deliver; the job events (dataset.job.*) when left out: dataset.changed is asked for by name',
      }),
    ),
  }),
);

const WebhookFields = {
  url: Type.String(),
  events: Type.Array(Event),
  dateCreated: Timestamp,
  dateUpdated: Timestamp,
};

export const Webhook = component('Webhook', Type.Object(WebhookFields));

export const WebhookWithSecret = component(
  'WebhookWithSecret',
  Type.Object({
    ...WebhookFields,
    secret: Type.String({
      description:
        'The HMAC-SHA256 key of X-DX-Signature-256; shown only in this answer (a PUT makes a new one)',
    }),
  }),
);

export const Delivery = component(
  'WebhookDelivery',
  Type.Object({
    deliveryId: Type.String({ description: 'X-DX-Delivery and the body’s deliveryId' }),
    event: Event,
    jobId: Type.Union([Type.String(), Type.Null()], {
      description: 'The job of a job event; null for dataset.changed',
    }),
    datasetId: Type.Union([Type.String(), Type.Null()], {
      description:
        'The dataset of dataset.changed (its body carries the changesCursor after the commit); null for a job event',
    }),
    installationId: Type.Integer(),
    workspaceId: Type.Integer(),
    occurredAt: Timestamp,
    status: Type.Unsafe<(typeof DELIVERY_STATUSES)[number]>({
      type: 'string',
      enum: [...DELIVERY_STATUSES],
      description: 'pending (to be sent or retried), delivered (a 2xx), failed (retries ended)',
    }),
    attempts: Type.Integer(),
    nextAttemptAt: Type.Union([Timestamp, Type.Null()]),
    lastAttemptAt: Type.Union([Timestamp, Type.Null()]),
    lastStatusCode: Type.Union([Type.Integer(), Type.Null()]),
    lastError: Type.Union([Type.String(), Type.Null()]),
    deliveredAt: Type.Union([Timestamp, Type.Null()]),
  }),
);

export const DeliveriesQuery = Type.Object(PageQueryFields);

export const DeliveriesPage = component(
  'WebhookDeliveryPage',
  Type.Object({
    metadata: Type.Object({
      count: Type.Integer(),
      nextPageToken: Type.Union([Type.String(), Type.Null()], { description: 'null: the last page' }),
    }),
    data: Type.Array(ref(Delivery)),
  }),
);

export const DeliveryParams = Type.Object({ deliveryId: Type.String({ minLength: 1, maxLength: 64 }) });
