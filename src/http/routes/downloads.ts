// GET /downloads/:datasetId/:linkId.(csv|ndjson): the records of a records:retrieve link, streamed
// from the records table the link pins (on every storage backend; nothing is in the object store).
// Each download holds a database connection (PostgreSQL: one of the pool's; SQLite: a read
// connection of its own) for as long as the client reads, so a process streams at most
// EXPORT_DOWNLOADS_MAX at once and answers 503 with Retry-After beyond: a crowd of slow downloads
// must not take the connections every other request needs.
import { Type } from 'typebox';
import { mediaTypeOf, openExport } from '../../domain/records/export.js';
import { problem } from '../../errors.js';
import { checkSignedUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { SIGNED_URL_SECURITY } from '../schemas/components.js';
import { SignedQuery } from '../schemas/jobs.js';
import { takeDownloadSlot } from '../download-slots.js';
import { DownloadParams } from '../schemas/records.js';

const DATASET_ID = /^[0-9A-Za-z-]{1,64}$/;

/** Registers the download route at the root (the signature is the credential). */
export function downloadRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/downloads/:datasetId/:file',
    {
      schema: {
        summary: 'Download an export of records through a signed link',
        description: `The link comes from POST /api/v1/datasets/{id}/records:retrieve. ${SIGNED_URL_SECURITY}`,
        operationId: 'downloadRecords',
        tags: ['records'],
        security: [],
        params: DownloadParams,
        querystring: SignedQuery,
        response: {
          200: {
            description: 'The export file: CSV with a header line (.csv) or newline-delimited JSON (.ndjson)',
            headers: { 'content-disposition': { type: 'string', description: 'attachment; filename=…' } },
            content: {
              'text/csv': { schema: Type.Unsafe<unknown>({ type: 'string' }) },
              'application/x-ndjson': { schema: Type.Unsafe<unknown>({ type: 'string' }) },
            },
          },
          ...problems(400, 403, 404, 503),
        },
      },
    },
    async (request, reply) => {
      const { datasetId, file } = request.params;
      const path = `/downloads/${datasetId}/${file}`;
      const check = checkSignedUrl(deps.signingSecret, 'GET', path, request.query, nowSeconds());
      if (check === 'invalid')
        throw problem('forbidden', 'The download link is not valid (bad or missing signature).', {
          code: 'signed_url_invalid',
        });
      if (check === 'expired')
        throw problem('forbidden', 'The download link has expired; ask for a new one.', {
          code: 'signed_url_expired',
        });
      // Dataset ids are UUIDs: anything else (a signed `..`, say) names no export.
      if (!DATASET_ID.test(datasetId)) throw problem('notFound', 'No export has this name.');
      const [linkId = '', ext = ''] = file.split('.');
      const format = ext === 'csv' ? 'csv' : 'ndjson';
      const release = takeDownloadSlot(deps.downloads);
      reply.raw.once('close', release);
      const body = await openExport(deps.db, deps.records, datasetId, Number(linkId), format).catch(
        (err: unknown) => {
          release();
          throw err;
        },
      );
      if (body === null) {
        release();
        throw problem('notFound', 'No export has this name (or its dataset was deleted).');
      }
      // An expired link in the middle of its download finishes: the table stays pinned a while after.
      return reply
        .type(mediaTypeOf(format))
        .header('content-disposition', `attachment; filename="${datasetId}.${ext}"`)
        .send(body);
    },
  );
}
