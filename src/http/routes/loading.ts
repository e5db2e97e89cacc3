// POST /datasets/:id/uploadUrl and POST /datasets/:id/records:load: start a load job.
import { parseLoadOptions } from '../../domain/jobs/load-options.js';
import { requestRecordsLoad, requestUploadUrl } from '../../domain/jobs/requests.js';
import { sourceUrlKey } from '../../domain/jobs/source-url.js';
import { installationOf } from '../auth.js';
import { IDEMPOTENCY_PROBLEMS, IdempotencyKeyHeaders, idempotentRoute } from '../idempotency.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { DatasetParams } from '../schemas/datasets.js';
import {
  RecordsLoadBody,
  RecordsLoadQuery,
  UploadJobResult,
  UploadUrlBody,
  UploadUrlQuery,
} from '../schemas/jobs.js';

const security = [{ accessToken: [] }];

/** Registers the two load-starting routes on an access-token scope. */
export function loadingRoutes(app: TypedApp, deps: ApiDeps): void {
  const urlKey = sourceUrlKey(deps.signingSecret);
  app.post(
    '/datasets/:id/uploadUrl',
    {
      schema: {
        summary: 'Get a signed URL to upload a file to; the load job starts once it is stored',
        operationId: 'createUploadUrl',
        tags: ['loading'],
        security,
        params: DatasetParams,
        querystring: UploadUrlQuery,
        headers: IdempotencyKeyHeaders,
        body: ref(UploadUrlBody),
        response: {
          202: ref(UploadJobResult),
          ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404, ...IDEMPOTENCY_PROBLEMS),
        },
      },
      ...idempotentRoute(deps),
    },
    async (request, reply) => {
      const result = await requestUploadUrl(
        deps.db,
        { ...installationOf(request), requestId: String(request.id) },
        {
          datasetId: request.params.id,
          mode: request.query.mode ?? 'create',
          options: parseLoadOptions(request.query),
          contentType: request.body.contentType,
          uploadType: request.query.type ?? 'singlerequest',
        },
        { objects: deps.objects, publicUrl: deps.config.publicUrl, signingSecret: deps.signingSecret },
      );
      return reply.code(202).send(result);
    },
  );

  app.post(
    '/datasets/:id/records::load',
    {
      schema: {
        summary: 'Load a CSV or JSON file from an http(s) URL (typically presigned)',
        operationId: 'loadRecordsFromUrl',
        tags: ['loading'],
        security,
        params: DatasetParams,
        querystring: RecordsLoadQuery,
        headers: IdempotencyKeyHeaders,
        body: ref(RecordsLoadBody),
        response: {
          202: ref(UploadJobResult),
          ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404, ...IDEMPOTENCY_PROBLEMS),
        },
      },
      ...idempotentRoute(deps),
    },
    async (request, reply) => {
      const result = await requestRecordsLoad(
        deps.db,
        { ...installationOf(request), requestId: String(request.id) },
        {
          datasetId: request.params.id,
          mode: request.query.mode ?? 'create',
          options: parseLoadOptions(request.query),
          url: request.body.url,
        },
        urlKey,
      );
      deps.notifier.notify();
      return reply.code(202).send(result);
    },
  );
}
