// POST /datasets/:id/records:retrieve (a signed download link) and GET /datasets/:id/records (pages).
import { changeFeedOn } from '../../config.js';
import type { Static } from 'typebox';
import { findVisibleDataset } from '../../domain/datasets/datasets.js';
import { createExportLink } from '../../domain/records/export.js';
import { cursorOfRead } from '../../domain/changes/feed.js';
import type { InstallationPrincipal } from '../../domain/identity/access-tokens.js';
import { recordsPageJson, type ReadCursor } from '../../domain/records/pages.js';
import { signUrl } from '../../lib/signed-url.js';
import { nowSeconds } from '../../lib/time.js';
import { installationOf } from '../auth.js';
import { absentBodyIsEmptyObject } from '../body.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { DatasetParams } from '../schemas/datasets.js';
import {
  RECORD_FILTERS_DESCRIPTION,
  RecordsPage,
  RecordsQuery,
  RetrieveBody,
  RetrieveResult,
} from '../schemas/records.js';

const security = [{ accessToken: [] }];
/** The path of a download link (served by downloads.ts on every storage backend). */
export const downloadPath = (datasetId: string, linkId: number, ext: 'csv' | 'ndjson') =>
  `/downloads/${datasetId}/${linkId}.${ext}`;

/** The header that carries the change feed's cursor of a records read (also in its body). */
export const CHANGES_CURSOR_HEADER = 'DX-Changes-Cursor';

/** The change-feed cursor of a read of a dataset's records by `caller` (domain/changes/feed.ts). */
function readCursorOf(deps: ApiDeps, caller: InstallationPrincipal, datasetId: string): ReadCursor {
  if (!changeFeedOn(deps.config)) return () => null;
  const owner = { datasetId, installationId: caller.installationId };
  return (generation, primaryKey) => cursorOfRead(deps.signingSecret, owner, generation, primaryKey);
}

/** Registers the record reading routes on an access-token scope. */
export function recordRoutes(app: TypedApp, deps: ApiDeps): void {
  app.post(
    '/datasets/:id/records::retrieve',
    {
      schema: {
        summary: 'A signed link (1 hour) to every record as it is now, as CSV or newline-delimited JSON',
        description:
          'The body may be left out (CSV). The link is served by GET /downloads/{datasetId}/{file}.',
        operationId: 'retrieveRecords',
        'x-body-optional': true,
        tags: ['records'],
        security,
        params: DatasetParams,
        body: ref(RetrieveBody),
        response: { 200: ref(RetrieveResult), ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404) },
      },
      preValidation: absentBodyIsEmptyObject,
    },
    async (request, reply) => {
      const caller = installationOf(request);
      const ds = await findVisibleDataset(deps.db, caller, request.params.id);
      const ext = (request.body.contentType ?? 'csv') === 'csv' ? 'csv' : 'ndjson';
      // Answered at once: the link pins this generation's table; the rows are read when it is fetched.
      const link = await createExportLink(deps.db, ds, ext, nowSeconds());
      const path = downloadPath(ds.id, link.id, ext);
      const changesCursor = readCursorOf(deps, caller, ds.id)(link.generation, link.primaryKey);
      if (changesCursor !== null) void reply.header(CHANGES_CURSOR_HEADER, changesCursor);
      return {
        url: signUrl(deps.signingSecret, deps.config.publicUrl, 'GET', path, link.expiresAt),
        changesCursor,
      };
    },
  );

  app.get(
    '/datasets/:id/records',
    {
      // Made of change_epochs' tables alone: kept while they are unchanged (read-cache.ts).
      config: { readCache: true },
      schema: {
        summary: 'A page of records in primary-key order, optionally filtered by property values',
        operationId: 'listRecords',
        tags: ['records'],
        security,
        params: DatasetParams,
        querystring: RecordsQuery,
        // The filters are any other query parameters: a free-form object (style form, exploded).
        'x-parameters': [
          {
            name: 'filters',
            in: 'query',
            style: 'form',
            explode: true,
            description: RECORD_FILTERS_DESCRIPTION,
            schema: { type: 'object', additionalProperties: { type: 'string' } },
          },
        ],
        response: { 200: ref(RecordsPage), ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      const caller = installationOf(request);
      const body = await recordsPageJson(
        deps.db,
        deps.records,
        caller,
        request.params.id,
        request.query,
        readCursorOf(deps, caller, request.params.id),
      );
      // Already JSON text (64-bit integers written digit for digit): sent as is, not re-serialised.
      return reply
        .type('application/json; charset=utf-8')
        .send(body as unknown as Static<typeof RecordsPage>);
    },
  );
}
