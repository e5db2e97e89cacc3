// GET /datasets/jobs/:jobId[/logs|/logs:current|/errors] and GET /datasets/:id/jobs.
import { currentJobStatus, getJob, jobLogs, listDatasetJobs } from '../../domain/jobs/jobs.js';
import { rowErrorsPage } from '../../domain/jobs/row-errors.js';
import { installationOf } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { DatasetParams } from '../schemas/datasets.js';
import {
  ErrorsPage,
  ErrorsQuery,
  Job,
  JobList,
  JobParams,
  JobsQuery,
  JobStatusEntry,
  JobStatusList,
} from '../schemas/jobs.js';

const security = [{ accessToken: [] }];

/** Registers the job routes on an access-token scope. */
export function jobRoutes(app: TypedApp, deps: ApiDeps): void {
  // Read per request: the public URL is configuration, which may be set after the routes are.
  const signing = () => ({ publicUrl: deps.config.publicUrl, signingSecret: deps.signingSecret });
  app.get(
    '/datasets/jobs/:jobId',
    {
      schema: {
        summary: 'One load job with its current status',
        operationId: 'getJob',
        tags: ['jobs'],
        security,
        params: JobParams,
        response: { 200: ref(Job), ...problems(400, 401, 403, 404) },
      },
    },
    async (request) => getJob(deps.db, installationOf(request), request.params.jobId, signing()),
  );

  app.get(
    '/datasets/jobs/:jobId/errors',
    {
      schema: {
        summary: "Every defect of the job's file, in line order, a page at a time",
        operationId: 'listJobErrors',
        tags: ['jobs'],
        security,
        params: JobParams,
        querystring: ErrorsQuery,
        response: { 200: ref(ErrorsPage), ...problems(400, 401, 403, 404, 409) },
      },
    },
    async (request) => rowErrorsPage(deps.db, installationOf(request), request.params.jobId, request.query),
  );

  app.get(
    '/datasets/jobs/:jobId/logs',
    {
      // Made of change_epochs' tables alone: kept while they are unchanged (read-cache.ts).
      config: { readCache: true },
      schema: {
        summary: 'Every status entry of a job, oldest first',
        operationId: 'listJobLogs',
        tags: ['jobs'],
        security,
        params: JobParams,
        response: { 200: ref(JobStatusList), ...problems(400, 401, 403, 404) },
      },
    },
    async (request) => {
      const data = await jobLogs(deps.db, installationOf(request), request.params.jobId);
      return { metadata: { count: data.length }, data };
    },
  );

  app.get(
    '/datasets/jobs/:jobId/logs::current',
    {
      // Made of change_epochs' tables alone: kept while they are unchanged (read-cache.ts).
      config: { readCache: true },
      schema: {
        summary: 'The current status entry of a job (while Running, with the live progress figures)',
        operationId: 'getCurrentJobStatus',
        tags: ['jobs'],
        security,
        params: JobParams,
        response: { 200: ref(JobStatusEntry), ...problems(400, 401, 403, 404) },
      },
    },
    async (request) => currentJobStatus(deps.db, installationOf(request), request.params.jobId),
  );

  app.get(
    '/datasets/:id/jobs',
    {
      schema: {
        summary: 'The load jobs of a dataset, newest first, a page at a time',
        operationId: 'listDatasetJobs',
        tags: ['jobs'],
        security,
        params: DatasetParams,
        querystring: JobsQuery,
        response: { 200: ref(JobList), ...problems(400, 401, 403, 404) },
      },
    },
    async (request) =>
      listDatasetJobs(deps.db, installationOf(request), request.params.id, signing(), request.query),
  );
}
