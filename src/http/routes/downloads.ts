// GET /downloads/:datasetId/:file: the embedded store's server of signed export links.
import { Type } from 'typebox';
import { mediaTypeOf } from '../../domain/records/export.js';
import { problem } from '../../errors.js';
import { checkSignedUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';
import { objectKeys, ObjectNotFound } from '../../storage/objects/index.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { SignedQuery } from '../schemas/jobs.js';
import { DownloadParams } from '../schemas/records.js';

const DATASET_ID = /^[0-9A-Za-z-]{1,64}$/;

/** Registers the download route at the root (the signature is the credential). */
export function downloadRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/downloads/:datasetId/:file',
    {
      schema: {
        summary: 'Download an export of records through a signed link',
        tags: ['records'],
        params: DownloadParams,
        querystring: SignedQuery,
        response: {
          200: Type.Unknown({ description: 'The export file (CSV or NDJSON)' }),
          ...problems(403, 404),
        },
      },
    },
    async (request, reply) => {
      const { datasetId, file } = request.params;
      const path = `/downloads/${datasetId}/${file}`;
      const check = checkSignedUrl(deps.signingSecret, 'GET', path, request.query, nowSeconds());
      if (check === 'invalid')
        throw problem('forbidden', 'The download link is not valid (bad or missing signature).');
      if (check === 'expired')
        throw problem('forbidden', 'The download link has expired; ask for a new one.');
      // Dataset ids are UUIDs: anything else (a signed `..`, say) names no export.
      if (!DATASET_ID.test(datasetId)) throw problem('notFound', 'No export has this name.');
      const [generation = '', ext = ''] = file.split('.');
      const format = ext === 'csv' ? 'csv' : 'ndjson';
      const key = objectKeys.export(datasetId, Number(generation), format);
      try {
        const body = await deps.objects.get(key);
        return reply
          .type(mediaTypeOf(format))
          .header('content-disposition', `attachment; filename="${datasetId}.${ext}"`)
          .send(body);
      } catch (err) {
        if (err instanceof ObjectNotFound)
          throw problem('notFound', 'The export is gone (the dataset was deleted).');
        throw err;
      }
    },
  );
}
