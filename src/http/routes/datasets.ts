// Dataset definitions: POST/GET/PATCH/DELETE /datasets[/:id], with an access token.
import { changeFeedOn } from '../../config.js';
import {
  createDataset,
  deleteDataset,
  getDataset,
  listDatasets,
  updateDataset,
} from '../../domain/datasets/datasets.js';
import { installationOf } from '../auth.js';
import { IDEMPOTENCY_PROBLEMS, IdempotencyKeyHeaders, idempotentRoute } from '../idempotency.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, NoContent, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import {
  Dataset,
  DatasetList,
  DatasetParams,
  NewDatasetBody,
  PatchDatasetBody,
  PatchDatasetQuery,
  SchemaChangeReport,
} from '../schemas/datasets.js';
import { changeSchema } from '../../domain/datasets/change-schema.js';
import { problem } from '../../errors.js';
import { Type } from 'typebox';

const security = [{ accessToken: [] }];

/** Registers the dataset definition routes on an access-token scope. */
export function datasetRoutes(app: TypedApp, deps: ApiDeps): void {
  app.post(
    '/datasets',
    {
      schema: {
        summary: 'Define a dataset',
        operationId: 'createDataset',
        tags: ['datasets'],
        security,
        headers: IdempotencyKeyHeaders,
        body: ref(NewDatasetBody),
        response: {
          201: ref(Dataset),
          ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404, ...IDEMPOTENCY_PROBLEMS),
        },
      },
      ...idempotentRoute(deps),
    },
    async (request, reply) => {
      const { tag_ids, tagIds = tag_ids, ...rest } = request.body;
      const input = { ...rest, ...(tagIds !== undefined ? { tagIds } : {}) };
      return reply.code(201).send(await createDataset(deps.db, installationOf(request), input));
    },
  );

  app.get(
    '/datasets',
    {
      // Made of change_epochs' tables alone: kept while they are unchanged (read-cache.ts).
      config: { readCache: true },
      schema: {
        summary: 'List the datasets this installation may see',
        operationId: 'listDatasets',
        tags: ['datasets'],
        security,
        response: { 200: ref(DatasetList), ...problems(400, 401, 403) },
      },
    },
    async (request) => {
      const data = await listDatasets(deps.db, installationOf(request));
      return { metadata: { count: data.length }, data };
    },
  );

  app.get(
    '/datasets/:id',
    {
      // Made of change_epochs' tables alone: kept while they are unchanged (read-cache.ts).
      config: { readCache: true },
      schema: {
        summary: 'One dataset',
        operationId: 'getDataset',
        tags: ['datasets'],
        security,
        params: DatasetParams,
        response: { 200: ref(Dataset), ...problems(400, 401, 403, 404) },
      },
    },
    async (request) => getDataset(deps.db, installationOf(request), request.params.id),
  );

  app.patch(
    '/datasets/:id',
    {
      schema: {
        summary: 'Rename or re-describe a dataset, or change its schema',
        description:
          'With `schema`, the schema changes in one step with its records (docs/loading.md, "Changing a schema"); with dryRun=true the answer is a SchemaChangeReport and nothing changes.',
        operationId: 'updateDataset',
        tags: ['datasets'],
        security,
        params: DatasetParams,
        querystring: PatchDatasetQuery,
        body: ref(PatchDatasetBody),
        response: {
          200: Type.Union([ref(Dataset), ref(SchemaChangeReport)], {
            description: 'The dataset; with dryRun=true, what the schema change would do',
          }),
          ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404, 409),
        },
      },
    },
    async (request) => {
      const caller = installationOf(request);
      const dryRun = request.query.dryRun === 'true';
      const { schema, ...names } = request.body;
      if (schema === undefined) {
        if (dryRun) {
          throw problem('invalid', 'dryRun=true reports what a schema change would do; send a schema.', {
            errors: { dryRun: ['only with a schema'] },
          });
        }
        return updateDataset(deps.db, caller, request.params.id, names);
      }
      return changeSchema(
        deps.db,
        deps.records,
        caller,
        request.params.id,
        { ...names, schema },
        dryRun,
        changeFeedOn(deps.config),
      );
    },
  );

  app.delete(
    '/datasets/:id',
    {
      schema: {
        summary: 'Delete a dataset with its records',
        operationId: 'deleteDataset',
        tags: ['datasets'],
        security,
        params: DatasetParams,
        response: { 204: NoContent('Deleted'), ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request, reply) => {
      await deleteDataset(deps.db, deps, installationOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
