// GET /datasets/jobs/:jobId[/logs|/logs:current] and GET /datasets/:id/jobs.
import { currentJobStatus, getJob, jobLogs, listDatasetJobs } from '../../domain/jobs/jobs.js';
import { installationOf } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { Envelope, problems } from '../schemas/common.js';
import { DatasetParams } from '../schemas/datasets.js';
import { Job, JobParams, JobStatusEntry } from '../schemas/jobs.js';

const security = [{ accessToken: [] }];

/** Registers the job routes on an access-token scope. */
export function jobRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/datasets/jobs/:jobId',
    {
      schema: {
        summary: 'One load job with its current status',
        tags: ['jobs'],
        security,
        params: JobParams,
        response: { 200: Job, ...problems(401, 403, 404) },
      },
    },
    async (request) => getJob(deps.db, installationOf(request), request.params.jobId),
  );

  app.get(
    '/datasets/jobs/:jobId/logs',
    {
      schema: {
        summary: 'Every status entry of a job, oldest first',
        tags: ['jobs'],
        security,
        params: JobParams,
        response: { 200: Envelope(JobStatusEntry), ...problems(401, 403, 404) },
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
      schema: {
        summary: 'The current status entry of a job (while Running, with the live progress figures)',
        tags: ['jobs'],
        security,
        params: JobParams,
        response: { 200: JobStatusEntry, ...problems(401, 403, 404) },
      },
    },
    async (request) => currentJobStatus(deps.db, installationOf(request), request.params.jobId),
  );

  app.get(
    '/datasets/:id/jobs',
    {
      schema: {
        summary: 'The load jobs of a dataset, newest first',
        tags: ['jobs'],
        security,
        params: DatasetParams,
        response: { 200: Envelope(Job), ...problems(401, 403, 404) },
      },
    },
    async (request) => {
      const data = await listDatasetJobs(deps.db, installationOf(request), request.params.id);
      return { metadata: { count: data.length }, data };
    },
  );
}
