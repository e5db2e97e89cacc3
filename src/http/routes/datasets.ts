// Dataset definitions: POST/GET/PATCH/DELETE /datasets[/:id], with an access token.
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
import { Envelope, problems } from '../schemas/common.js';
import { Dataset, DatasetParams, NewDatasetBody, PatchDatasetBody } from '../schemas/datasets.js';

const security = [{ accessToken: [] }];

/** Registers the dataset definition routes on an access-token scope. */
export function datasetRoutes(app: TypedApp, deps: ApiDeps): void {
  app.post(
    '/datasets',
    {
      schema: {
        summary: 'Define a dataset',
        tags: ['datasets'],
        security,
        headers: IdempotencyKeyHeaders,
        body: NewDatasetBody,
        response: { 201: Dataset, ...problems(401, 403, ...IDEMPOTENCY_PROBLEMS) },
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
      schema: {
        summary: 'List the datasets this installation may see',
        tags: ['datasets'],
        security,
        response: { 200: Envelope(Dataset), ...problems(401, 403) },
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
      schema: {
        summary: 'One dataset',
        tags: ['datasets'],
        security,
        params: DatasetParams,
        response: { 200: Dataset, ...problems(401, 403, 404) },
      },
    },
    async (request) => getDataset(deps.db, installationOf(request), request.params.id),
  );

  app.patch(
    '/datasets/:id',
    {
      schema: {
        summary: 'Rename or re-describe a dataset',
        tags: ['datasets'],
        security,
        params: DatasetParams,
        body: PatchDatasetBody,
        response: { 200: Dataset, ...problems(400, 401, 403, 404) },
      },
    },
    async (request) => updateDataset(deps.db, installationOf(request), request.params.id, request.body),
  );

  app.delete(
    '/datasets/:id',
    {
      schema: {
        summary: 'Delete a dataset with its records',
        tags: ['datasets'],
        security,
        params: DatasetParams,
        response: { 204: { type: 'null', description: 'Deleted' }, ...problems(401, 403, 404) },
      },
    },
    async (request, reply) => {
      await deleteDataset(deps.db, deps, installationOf(request), request.params.id);
      return reply.code(204).send(null);
    },
  );
}
