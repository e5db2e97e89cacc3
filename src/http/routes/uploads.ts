// PUT /uploads/:jobId: the embedded store's receiver of signed upload URLs (a root route; the
// signature is the credential). The body is streamed to disk, never buffered by Fastify.
import type { FastifyInstance } from 'fastify';
import { claimUpload, expireUpload, queueUpload, releaseUpload } from '../../domain/jobs/uploads.js';
import { uploadPath } from '../../domain/jobs/requests.js';
import { problem } from '../../errors.js';
import { checkSignedUrl } from '../../lib/signed-url.js';
import { ObjectTooLarge } from '../../storage/objects/index.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import type { LoadingDeps } from '../loading-deps.js';
import { problems } from '../schemas/common.js';
import { SignedQuery, UploadParams } from '../schemas/jobs.js';
import { Type } from 'typebox';

/** Media types an upload may declare. */
export const UPLOAD_MEDIA_TYPES = [
  'text/csv',
  'application/json',
  'text/tab-separated-values',
  'application/octet-stream',
  'application/x-ndjson',
  'application/gzip',
];

/** Registers the upload receiver in its own scope (it alone takes raw bodies of any type). */
export function uploadReceiverRoutes(root: TypedApp, deps: ApiDeps, loading: LoadingDeps): void {
  void root.register(async (scope: FastifyInstance) => {
    // Leave the body unread: the handler streams request.raw itself (no buffering, own 415).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const app = scope as unknown as TypedApp;
    app.put(
      '/uploads/:jobId',
      {
        schema: {
          summary: 'Receive the file of a signed upload URL',
          tags: ['loading'],
          params: UploadParams,
          querystring: SignedQuery,
          response: {
            200: Type.Object({ datasetId: Type.String(), jobId: Type.String(), bytes: Type.Integer() }),
            ...problems(403, 404, 409, 413, 415),
          },
        },
      },
      async (request) => {
        const { jobId } = request.params;
        const check = checkSignedUrl(
          loading.signingSecret,
          'PUT',
          uploadPath(jobId),
          request.query,
          Math.floor(Date.now() / 1000),
        );
        if (check === 'invalid')
          throw problem('forbidden', 'The upload URL is not valid (bad or missing signature).');
        if (check === 'expired') {
          await expireUpload(deps.db, jobId);
          throw problem('forbidden', 'The upload URL has expired; ask for a new one.');
        }
        const mediaType = (request.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
        if (!UPLOAD_MEDIA_TYPES.includes(mediaType)) {
          throw problem(
            'unsupportedMediaType',
            `Upload Content-Type must be one of ${UPLOAD_MEDIA_TYPES.join(', ')}.`,
          );
        }
        const declared = Number(request.headers['content-length'] ?? NaN);
        if (declared > deps.config.uploadMaxBytes) throw tooLarge(deps.config.uploadMaxBytes);
        const claim = `upload:${request.id}`;
        const job = await claimUpload(deps.db, jobId, claim);
        if (job.object_key === null) throw new Error(`upload job ${jobId} has no object key`);
        let bytes: number;
        try {
          const info = await loading.objects.put(job.object_key, request.raw, {
            contentType: mediaType,
            maxBytes: deps.config.uploadMaxBytes,
          });
          bytes = info.size;
        } catch (err) {
          await releaseUpload(deps.db, jobId, claim);
          if (err instanceof ObjectTooLarge) throw tooLarge(deps.config.uploadMaxBytes);
          throw err;
        }
        if (!(await queueUpload(deps.db, jobId, claim, bytes))) {
          await loading.objects.delete(job.object_key);
          throw problem('conflict', 'This upload URL was already used.');
        }
        loading.notifier.notify();
        return { datasetId: job.dataset_id, jobId, bytes };
      },
    );
  });
}

function tooLarge(max: number) {
  return problem('tooLarge', `The file is larger than the limit of ${max} bytes (UPLOAD_MAX_BYTES).`);
}
