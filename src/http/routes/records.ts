// POST /datasets/:id/records:retrieve (a signed download link) and GET /datasets/:id/records (pages).
import type { Static } from 'typebox';
import { findVisibleDataset } from '../../domain/datasets/datasets.js';
import { createExportLink } from '../../domain/records/export.js';
import { recordsPageJson } from '../../domain/records/pages.js';
import { signUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';
import { installationOf } from '../auth.js';
import { absentBodyIsEmptyObject } from '../body.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { DatasetParams } from '../schemas/datasets.js';
import { RecordsPage, RecordsQuery, RetrieveBody, RetrieveResult } from '../schemas/records.js';

const security = [{ accessToken: [] }];
/** The path of a download link (served by downloads.ts on every storage backend). */
export const downloadPath = (datasetId: string, linkId: number, ext: 'csv' | 'ndjson') =>
  `/downloads/${datasetId}/${linkId}.${ext}`;

/** Registers the record reading routes on an access-token scope. */
export function recordRoutes(app: TypedApp, deps: ApiDeps): void {
  app.post(
    '/datasets/:id/records::retrieve',
    {
      schema: {
        summary: 'A signed link (1 hour) to every record as it is now, as CSV or newline-delimited JSON',
        tags: ['records'],
        security,
        params: DatasetParams,
        body: RetrieveBody,
        response: { 200: RetrieveResult, ...problems(400, 401, 403, 404) },
      },
      preValidation: absentBodyIsEmptyObject,
    },
    async (request) => {
      const ds = await findVisibleDataset(deps.db, installationOf(request), request.params.id);
      const ext = (request.body.contentType ?? 'csv') === 'csv' ? 'csv' : 'ndjson';
      // Answered at once: the link pins this generation's table; the rows are read when it is fetched.
      const link = await createExportLink(deps.db, ds, ext, nowSeconds());
      const path = downloadPath(ds.id, link.id, ext);
      return { url: signUrl(deps.signingSecret, deps.config.publicUrl, 'GET', path, link.expiresAt) };
    },
  );

  app.get(
    '/datasets/:id/records',
    {
      schema: {
        summary: 'A page of records in primary-key order, optionally filtered by property values',
        tags: ['records'],
        security,
        params: DatasetParams,
        querystring: RecordsQuery,
        response: { 200: RecordsPage, ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const body = await recordsPageJson(
        deps.db,
        deps.records,
        installationOf(request),
        request.params.id,
        request.query,
      );
      // Already JSON text (64-bit integers written digit for digit): sent as is, not re-serialised.
      return reply
        .type('application/json; charset=utf-8')
        .send(body as unknown as Static<typeof RecordsPage>);
    },
  );
}
