// GET /rejected-rows/:jobId: the rejected-rows file of a job through its signed link (the
// signature is the credential), streamed from the database page by page.
import { Readable } from 'node:stream';
import { Type } from 'typebox';
import { rejectedRowsPath } from '../../domain/jobs/rejected-rows-link.js';
import { rejectedRowsCsv } from '../../domain/jobs/row-errors.js';
import { problem } from '../../errors.js';
import { checkSignedUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { SIGNED_URL_SECURITY } from '../schemas/components.js';
import { JobParams, SignedQuery } from '../schemas/jobs.js';

/** Registers the rejected-rows download at the root. */
export function rejectedRowsRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/rejected-rows/:jobId',
    {
      schema: {
        summary: "A job's rejected rows as CSV (line,property,message,originalText) through a signed link",
        description: `The link is a job's rejectedRowsUrl. ${SIGNED_URL_SECURITY}`,
        operationId: 'downloadRejectedRows',
        tags: ['jobs'],
        security: [],
        params: JobParams,
        querystring: SignedQuery,
        response: {
          200: {
            description: 'CSV, one line per defect, in line order',
            headers: { 'content-disposition': { type: 'string', description: 'attachment; filename=…' } },
            content: { 'text/csv': { schema: Type.Unsafe<unknown>({ type: 'string' }) } },
          },
          ...problems(400, 403, 404),
        },
      },
    },
    async (request, reply) => {
      const { jobId } = request.params;
      const check = checkSignedUrl(
        deps.signingSecret,
        'GET',
        rejectedRowsPath(jobId),
        request.query,
        nowSeconds(),
      );
      if (check === 'invalid')
        throw problem('forbidden', 'The link is not valid (bad or missing signature).', {
          code: 'signed_url_invalid',
        });
      if (check === 'expired')
        throw problem('forbidden', 'The link has expired; read the job again for a new one.', {
          code: 'signed_url_expired',
        });
      const csv = await rejectedRowsCsv(deps.db, jobId);
      if (csv === undefined) throw problem('notFound', 'The job is gone (its dataset was deleted).');
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="rejected-rows-${jobId}.csv"`)
        .send(Readable.from(csv));
    },
  );
}
