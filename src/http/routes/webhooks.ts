// PUT/GET/DELETE /apps/me/webhook and its deliveries, with the app's own JWT (#13).
import { callerAppOf } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, NoContent, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import {
  DeliveriesPage,
  DeliveriesQuery,
  Delivery,
  DeliveryParams,
  SetWebhookBody,
  Webhook,
  WebhookWithSecret,
} from '../schemas/webhooks.js';
import { getWebhook, removeWebhook, setWebhook } from '../../domain/webhooks/webhooks.js';
import { listDeliveries, redeliver } from '../../domain/webhooks/deliveries.js';

const security = [{ appJwt: [] }];
const tags = ['webhooks'];

/** Registers the webhook routes on an app-JWT scope. */
export function webhookRoutes(app: TypedApp, deps: ApiDeps): void {
  app.put(
    '/apps/me/webhook',
    {
      schema: {
        summary: "Set the app's webhook (a new signing secret, shown only in this answer)",
        operationId: 'setWebhook',
        tags,
        security,
        body: ref(SetWebhookBody),
        response: {
          200: ref(WebhookWithSecret, { description: 'Replaced (a new secret)' }),
          201: ref(WebhookWithSecret, { description: 'Set' }),
          ...problems(...JSON_BODY_PROBLEMS, 401, 404),
        },
      },
    },
    async (request, reply) => {
      const appId = callerAppOf(request).id;
      const existed = await getWebhook(deps.db, appId).then(
        () => true,
        () => false,
      );
      const hook = await setWebhook(deps.db, appId, request.body.url, {
        signingSecret: deps.signingSecret,
        allowlist: deps.config.webhooks.urlAllowlist,
        ...(request.body.events !== undefined ? { events: request.body.events } : {}),
      });
      return reply.code(existed ? 200 : 201).send(hook);
    },
  );

  app.get(
    '/apps/me/webhook',
    {
      schema: {
        summary: "The app's webhook (its URL and events; never the secret)",
        operationId: 'getWebhook',
        tags,
        security,
        response: { 200: ref(Webhook), ...problems(400, 401, 404) },
      },
    },
    async (request) => getWebhook(deps.db, callerAppOf(request).id),
  );

  app.delete(
    '/apps/me/webhook',
    {
      schema: {
        summary: "Remove the app's webhook and its deliveries",
        operationId: 'deleteWebhook',
        tags,
        security,
        response: { 204: NoContent('Removed'), ...problems(400, 401, 404) },
      },
    },
    async (request, reply) => {
      await removeWebhook(deps.db, callerAppOf(request).id);
      return reply.code(204).send(null);
    },
  );

  app.get(
    '/apps/me/webhook/deliveries',
    {
      schema: {
        summary: "The app's webhook deliveries, newest first, a page at a time",
        operationId: 'listWebhookDeliveries',
        tags,
        security,
        querystring: DeliveriesQuery,
        response: { 200: ref(DeliveriesPage), ...problems(400, 401) },
      },
    },
    async (request) => listDeliveries(deps.db, callerAppOf(request).id, request.query),
  );

  app.post(
    // The regex ends the id at the colon of the custom method (`…/:id:redeliver`).
    '/apps/me/webhook/deliveries/:deliveryId(^[^:/]+)::redeliver',
    {
      schema: {
        summary: 'Send a delivery again (as soon as a worker can, with 24 more hours of retries)',
        operationId: 'redeliverWebhookDelivery',
        tags,
        security,
        params: DeliveryParams,
        response: { 202: ref(Delivery), ...problems(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const delivery = await redeliver(deps.db, callerAppOf(request).id, request.params.deliveryId);
      deps.notifier.notify();
      return reply.code(202).send(delivery);
    },
  );
}
