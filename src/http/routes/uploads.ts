// PUT /uploads/:jobId: the receiver of the upload URLs the service signs itself (a root route; the
// signature is the credential). Whole files and resumable sessions alike are received by the
// domain (domain/jobs/receive-upload.ts); this handler checks the signature and answers.
import type { FastifyInstance } from 'fastify';
import { Type } from 'typebox';
import { settleBody, streamedBody } from '../streamed-body.js';
import { receiveUpload } from '../../domain/jobs/receive-upload.js';
import { newUploadClaim } from '../../domain/jobs/uploads.js';
import { uploadPath } from '../../domain/jobs/requests.js';
import { problem } from '../../errors.js';
import { checkSignedUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { NoContent, problems } from '../schemas/common.js';
import { ref, SIGNED_URL_SECURITY } from '../schemas/components.js';
import { UploadReceived } from '../schemas/platform.js';
import { UPLOAD_MEDIA_TYPE_NAMES } from '../../domain/jobs/upload-headers.js';
import { SignedQuery, UploadParams } from '../schemas/jobs.js';

/** The file as any accepted media type: bytes, read as the Content-Type (or the URL's contentType) says. */
const fileBody = Type.Unsafe<unknown>({
  description: 'The file, or in a resumable session a slice of it (as Content-Range says); may be gzipped',
});

/** Registers the upload receiver in its own scope (it alone takes raw bodies of any type). */
export function uploadReceiverRoutes(root: TypedApp, deps: ApiDeps): void {
  void root.register(async (scope: FastifyInstance) => {
    // Leave the body unread: the domain streams request.raw itself (no buffering, own 415).
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', (_request, _payload, done) => done(null));
    const app = scope as unknown as TypedApp;
    app.put(
      '/uploads/:jobId',
      {
        schema: {
          summary: 'Receive the file (or, in a resumable session, a slice) of a signed upload URL',
          description:
            `${SIGNED_URL_SECURITY} Single-request URLs take the whole file. Resumable URLs take slices with ` +
            '`Content-Range: bytes START-END/TOTAL` (308 with `Range` until the last, then 200), and ' +
            '`Content-Range: bytes */TOTAL` with no body asks where the session stands.',
          operationId: 'uploadFile',
          'x-body-optional': true,
          tags: ['loading'],
          security: [],
          params: UploadParams,
          querystring: SignedQuery,
          headers: Type.Object({
            'content-range': Type.Optional(
              Type.String({
                description:
                  'Resumable sessions: `bytes START-END/TOTAL` (TOTAL `*` while unknown) for a slice, `bytes */TOTAL` with no body to ask where the session stands',
              }),
            ),
          }),
          // The scope reads no body (the domain streams it): these schemas accept anything and only
          // document the media types; the domain answers 415 for any other.
          body: {
            content: Object.fromEntries(UPLOAD_MEDIA_TYPE_NAMES.map((type) => [type, { schema: fileBody }])),
          },
          response: {
            200: ref(UploadReceived),
            308: {
              ...NoContent('Resumable session: more bytes awaited; `Range` says which are persisted'),
              headers: {
                range: { type: 'string', description: '`bytes=0-LAST`: the bytes persisted (absent: none)' },
              },
            },
            ...problems(400, 403, 404, 409, 410, 413, 415),
          },
        },
      },
      async (request, reply) => {
        const { jobId } = request.params;
        const check = checkSignedUrl(
          deps.signingSecret,
          'PUT',
          uploadPath(jobId),
          request.query,
          nowSeconds(),
        );
        if (check === 'invalid')
          throw problem('forbidden', 'The upload URL is not valid (bad or missing signature).', {
            code: 'signed_url_invalid',
          });
        const length = request.headers['content-length'];
        const body = streamedBody(request.raw);
        const answer = await receiveUpload(
          { db: deps.db, objects: deps.objects, maxBytes: deps.config.uploadMaxBytes },
          {
            jobId,
            urlExpired: check === 'expired',
            contentType: request.headers['content-type'],
            contentRange: request.headers['content-range'],
            contentLength: length === undefined ? null : Number(length),
            body,
            claim: newUploadClaim(),
          },
        );
        // A slice answered without being stored (a repeat, one past the persisted prefix) was not read.
        await settleBody(request.raw, body, reply, deps.config.uploadMaxBytes);
        if (answer.status === 200) {
          deps.notifier.notify();
          return reply.code(200).send(answer.body);
        }
        if (answer.range !== null) void reply.header('range', answer.range);
        // No body, as Google Cloud Storage answers: send(null) would write a JSON `null`; undefined
        // writes nothing (the route's type knows only the schema's null).
        return reply.code(308).send(undefined as unknown as null);
      },
    );
  });
}
