// Schemas of an app's webhook and its deliveries (#13).
import { Type } from 'typebox';
import { DELIVERY_STATUSES, WEBHOOK_EVENTS } from '../../storage/db/tables.js';
import { Timestamp } from './common.js';

const Event = Type.Unsafe<(typeof WEBHOOK_EVENTS)[number]>({ type: 'string', enum: [...WEBHOOK_EVENTS] });

export const SetWebhookBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: 2048,
    description: 'http(s) URL the deliveries are POSTed to; internal addresses need WEBHOOK_URL_ALLOWLIST',
  }),
});

export const Webhook = Type.Object({
  url: Type.String(),
  events: Type.Array(Event),
  dateCreated: Timestamp,
  dateUpdated: Timestamp,
});

export const WebhookWithSecret = Type.Object({
  ...Webhook.properties,
  secret: Type.String({
    description:
      'The HMAC-SHA256 key of X-DX-Signature-256; shown only in this answer (a PUT makes a new one)',
  }),
});

export const Delivery = Type.Object({
  deliveryId: Type.String({ description: 'X-DX-Delivery and the body’s deliveryId' }),
  event: Event,
  jobId: Type.String(),
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
});

export const DeliveriesQuery = Type.Object({
  pageSize: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: '1 to 10000, default 100' })),
  pageToken: Type.Optional(Type.String({ description: 'nextPageToken of the previous page' })),
});

export const DeliveriesPage = Type.Object({
  metadata: Type.Object({ count: Type.Integer(), nextPageToken: Type.Union([Type.String(), Type.Null()]) }),
  data: Type.Array(Delivery),
});

export const DeliveryParams = Type.Object({ deliveryId: Type.String({ minLength: 1, maxLength: 64 }) });
