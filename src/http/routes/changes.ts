// GET /datasets/:id/changes: the change feed (domain/changes/feed.ts; docs/loading.md, "Following
// changes"). Same credential and visibility as the records it lists; never a kept answer, since it
// reads the change log, which the kept answers' epochs do not cover.
import { changeFeedOn } from '../../config.js';
import { problem } from '../../errors.js';
import type { Static } from 'typebox';
import { changesPageJson } from '../../domain/changes/feed.js';
import { installationOf } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { ChangePage, ChangesQuery } from '../schemas/changes.js';
import { DatasetParams } from '../schemas/datasets.js';

const security = [{ accessToken: [] }];

/** Registers the change feed on an access-token scope. */
export function changeRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/datasets/:id/changes',
    {
      schema: {
        summary: 'What changed in the records since a cursor: upserted records, deleted keys, schema changes',
        description:
          'In commit order, each key once at its latest change. `since` is the changesCursor of a records read or the nextCursor of a page; read on while hasMore, then keep nextCursor. 410 changes_cursor_expired: read every record again and start from the changesCursor of that read.',
        operationId: 'listChanges',
        tags: ['records'],
        security,
        params: DatasetParams,
        querystring: ChangesQuery,
        response: { 200: ref(ChangePage), ...problems(400, 401, 403, 404, 409, 410) },
      },
    },
    async (request, reply) => {
      if (!changeFeedOn(deps.config)) {
        throw problem(
          'conflict',
          'This service keeps no changes (CHANGES_RETENTION_HOURS=0): read the records instead.',
          { code: 'change_feed_off' },
        );
      }
      const caller = installationOf(request);
      const body = await changesPageJson(
        deps.db,
        deps.records,
        deps.signingSecret,
        caller,
        request.params.id,
        request.query,
      );
      // Already JSON text (64-bit integers written digit for digit): sent as is, not re-serialised.
      return reply.type('application/json; charset=utf-8').send(body as unknown as Static<typeof ChangePage>);
    },
  );
}
