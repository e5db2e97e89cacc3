// GET /datasets/tags, POST /datasets/:id/tags, DELETE /datasets/:id/tags/:datasetTagId.
import { findVisibleDataset } from '../../domain/datasets/datasets.js';
import { addTag, connectedApps, removeTagAsApp } from '../../domain/datasets/tags.js';
import { appIdOf } from '../../domain/identity/app-id.js';
import { installationOf } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, NoContent, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { ConnectedAppList, DatasetParams, DatasetTag, NewTagBody, TagParams } from '../schemas/datasets.js';

const security = [{ accessToken: [] }];

/** Registers the tag routes on an access-token scope. */
export function datasetTagRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/datasets/tags',
    {
      schema: {
        summary: 'The apps connected to the workspace, which datasets may be tagged with',
        operationId: 'listConnectedApps',
        tags: ['datasets'],
        security,
        response: { 200: ref(ConnectedAppList), ...problems(400, 401, 403) },
      },
    },
    async (request) => {
      const data = await connectedApps(deps.db, installationOf(request).workspaceId);
      return { metadata: { count: data.length }, data };
    },
  );

  app.post(
    '/datasets/:id/tags',
    {
      schema: {
        summary: 'Let another connected app see the dataset',
        operationId: 'addDatasetTag',
        tags: ['datasets'],
        security,
        params: DatasetParams,
        body: ref(NewTagBody),
        response: { 201: ref(DatasetTag), ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = installationOf(request);
      await findVisibleDataset(deps.db, caller, request.params.id);
      const appId = appIdOf(request.body, 'platformAppId');
      const tag = await addTag(deps.db, caller.workspaceId, request.params.id, appId);
      return reply.code(201).send(tag);
    },
  );

  app.delete(
    '/datasets/:id/tags/:datasetTagId',
    {
      schema: {
        summary: 'Remove a tag from the dataset',
        description:
          'Any app that sees the dataset may remove any of its tags. Removing the tag of the app that ' +
          'created it, by another app, takes that app’s access away: the removal is recorded in the ' +
          'workspace’s audit log, where the workspace’s owners see it and can tag the app again.',
        operationId: 'removeDatasetTag',
        tags: ['datasets'],
        security,
        params: TagParams,
        response: { 204: NoContent('Removed'), ...problems(400, 401, 403, 404) },
      },
    },
    async (request, reply) => {
      const caller = installationOf(request);
      const dataset = await findVisibleDataset(deps.db, caller, request.params.id);
      await removeTagAsApp(deps.db, caller, dataset, request.params.datasetTagId);
      return reply.code(204).send(null);
    },
  );
}
