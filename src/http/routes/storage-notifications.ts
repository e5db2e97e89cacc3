// POST /api/v1/storage/notifications: the bucket-notification webhook of an S3-compatible store.
// It only hurries what the worker's polling would find anyway: each named upload is confirmed
// with a HEAD (the notification's own size and existence are not trusted) and its job queued once.
import { Type } from 'typebox';
import { awaitingUploadOfKey, checkUploadArrival, type ArrivalOutcome } from '../../domain/jobs/arrivals.js';
import { problem } from '../../errors.js';
import { hashSecret, secretMatchesHash } from '../../lib/secrets.js';
import type { Config } from '../../config.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { NotificationReceived } from '../schemas/platform.js';
import { objectKeysOfNotification } from './notification-shapes.js';

/** Where stores send their notifications. */
export const NOTIFICATIONS_PATH = '/api/v1/storage/notifications';

/** The webhook's settings when it is on (STORAGE=s3 with S3_NOTIFICATION_TOKEN), else null. */
function notificationSettings(config: Pick<Config, 'storage'>): { bucket: string; token: string } | null {
  const storage = config.storage;
  if (storage.kind !== 's3' || storage.s3.notificationToken === null) return null;
  return { bucket: storage.s3.bucket, token: storage.s3.notificationToken };
}

/** Whether the webhook is on. Off, it leaves nothing in the OpenAPI document either: no path, no
 * component of its answer, no security scheme, no tag. */
export function storageNotificationsOn(config: Pick<Config, 'storage'>): boolean {
  return notificationSettings(config) !== null;
}

/** Registers the webhook and its answer's component when it is on; otherwise nothing. */
export function storageNotificationRoutes(root: TypedApp, deps: ApiDeps): void {
  const settings = notificationSettings(deps.config);
  if (settings === null) return;
  root.addSchema(NotificationReceived);
  const { bucket } = settings;
  // Compared as hashes: the time taken depends on neither the token's content nor its length.
  const tokenHash = hashSecret(settings.token);

  void root.register(async (scope) => {
    const app = scope as unknown as TypedApp;
    // Before the body is read: a caller without the token gets nothing parsed for it.
    app.addHook('onRequest', async (request) => {
      const given = presentedToken(request.headers.authorization, request.query);
      if (given === null || !secretMatchesHash(given, tokenHash)) {
        throw problem('unauthenticated', 'A valid notification token is required.');
      }
    });
    app.post(
      NOTIFICATIONS_PATH,
      {
        schema: {
          summary:
            'Bucket notifications (S3 event, EventBridge or Pub/Sub shape) announcing uploads; authenticated by S3_NOTIFICATION_TOKEN',
          description:
            'Registered only when STORAGE=s3 and S3_NOTIFICATION_TOKEN is set. The token goes in ' +
            '`Authorization: Bearer`, as the password of Basic auth, or in `?token=` (Pub/Sub push).',
          operationId: 'receiveStorageNotification',
          tags: ['storage'],
          security: [{ notificationToken: [] }, { notificationBasic: [] }, { notificationTokenQuery: [] }],
          querystring: Type.Object({ token: Type.Optional(Type.String()) }),
          body: Type.Object({}, { additionalProperties: true, description: "The store's notification" }),
          response: { 200: ref(NotificationReceived), ...problems(...JSON_BODY_PROBLEMS, 401) },
        },
      },
      async (request) => {
        const keys = objectKeysOfNotification(request.body, bucket);
        let queued = 0;
        for (const key of keys) {
          const job = await awaitingUploadOfKey(deps.db, key);
          if (job === null) continue;
          const outcome: ArrivalOutcome = await checkUploadArrival(
            deps.db,
            deps.objects,
            job,
            deps.config.uploadMaxBytes,
          );
          if (outcome === 'queued') queued++;
        }
        if (queued > 0) deps.notifier.notify();
        return { received: keys.length, queued };
      },
    );
  });
}

/** The token from `Authorization: Bearer <t>`, Basic auth's password, or `?token=` (Pub/Sub push). */
function presentedToken(authorization: string | undefined, query: unknown): string | null {
  if (authorization !== undefined) {
    const [scheme = '', value = ''] = authorization.trim().split(/\s+/, 2);
    if (scheme.toLowerCase() === 'bearer') return value;
    if (scheme.toLowerCase() === 'basic') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const colon = decoded.indexOf(':');
      return colon === -1 ? null : decoded.slice(colon + 1);
    }
    return null;
  }
  if (typeof query === 'object' && query !== null && 'token' in query && typeof query.token === 'string') {
    return query.token;
  }
  return null;
}
