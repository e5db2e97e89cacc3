// A load (job) of a workspace's dataset in the console: its page, and its rejected-rows file.
// The file is streamed by a console route to a signed-in member, not through the API's signed
// link: a signed link is a bearer credential for an hour that would sit in the page, the browser's
// history and anything the member pastes it into; this route asks for the session every time.
import { loadAskedBy, loadUploadedBy } from '../../../domain/console/origins.js';
import { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { getDataset, workspaceReader } from '../../../domain/datasets/datasets.js';
import { getJob, jobLogs, listWorkspaceJobs } from '../../../domain/jobs/jobs.js';
import { JOB_STATUSES, type JobStatus } from '../../../domain/jobs/status.js';
import { rejectedRowsCsv, rowErrorsPageWithText } from '../../../domain/jobs/row-errors.js';
import { pageContext, sendPage } from './context.js';
import { accessOf, idParam } from './datasets.js';
import {
  ERRORS_PER_PAGE,
  jobPage,
  LOADS_PER_PAGE,
  loadStillRuns,
  RUNNING_LOAD_REFRESH_SECONDS,
  workspaceLoadsPage,
} from './pages-datasets.js';

/** The status a list of loads is filtered by (`?status=`, '' or none for any), or a 400 page. */
function statusFilter(query: unknown): JobStatus | null {
  const status = (query as { status?: unknown }).status;
  if (status === undefined || status === '') return null;
  if (typeof status === 'string' && (JOB_STATUSES as readonly string[]).includes(status))
    return status as JobStatus;
  throw problem('invalid', `There is no such load status. Use one of: ${JOB_STATUSES.join(', ')}.`);
}

/** /console/workspaces/:workspaceId/loads and /console/workspaces/:workspaceId/jobs/:jobId[/rejected-rows.csv]. */
export function consoleJobRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const signing = () => ({ publicUrl: deps.config.publicUrl, signingSecret: deps.signingSecret });
  const prefix = '/workspaces/:workspaceId/jobs/:jobId';

  scope.get('/workspaces/:workspaceId/loads', async (request, reply) => {
    const { access } = await accessOf(db, request);
    const status = statusFilter(request.query);
    const token = (request.query as { loads?: unknown }).loads;
    const page = await listWorkspaceJobs(deps.db, access.workspaceId, signing(), {
      status,
      pageSize: LOADS_PER_PAGE,
      ...(typeof token === 'string' && token !== '' ? { pageToken: token } : {}),
    });
    return sendPage(
      reply,
      200,
      workspaceLoadsPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        workspaceName: access.workspaceName,
        status,
        page,
        later: typeof token === 'string' && token !== '',
      }),
    );
  });

  scope.get(prefix, async (request, reply) => {
    const { access } = await accessOf(db, request);
    const jobId = idParam(request.params, 'jobId', 'load');
    const reader = workspaceReader(access.workspaceId);
    const job = await getJob(deps.db, reader, jobId, signing());
    const raw = (request.query as { errors?: unknown }).errors;
    const errorsToken = typeof raw === 'string' ? raw : '';
    const [dataset, timeline, errors, askedBy, uploadedBy] = await Promise.all([
      getDataset(deps.db, reader, job.datasetId),
      jobLogs(deps.db, reader, jobId),
      rowErrorsPageWithText(deps.db, reader, jobId, {
        pageSize: String(ERRORS_PER_PAGE),
        ...(errorsToken !== '' ? { pageToken: errorsToken } : {}),
      }),
      loadAskedBy(deps.db, jobId),
      loadUploadedBy(db, access.workspaceId, jobId),
    ]);
    // A load that may still change reloads its page by itself (no script: the page works without one).
    if (loadStillRuns(job.currentStatus.status))
      reply.header('refresh', String(RUNNING_LOAD_REFRESH_SECONDS));
    return sendPage(
      reply,
      200,
      jobPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        workspaceName: access.workspaceName,
        datasetName: dataset.name,
        job,
        askedBy,
        uploadedBy,
        timeline,
        errors,
        laterErrorsPage: errorsToken !== '',
        // The API's job view offers the file exactly when the ended job has defects; so does the page.
        rejectedRowsHref:
          job.rejectedRowsUrl !== null
            ? `/console/workspaces/${access.workspaceId}/jobs/${jobId}/rejected-rows.csv`
            : null,
      }),
    );
  });

  scope.get(`${prefix}/rejected-rows.csv`, async (request, reply) => {
    const { access } = await accessOf(db, request);
    const jobId = idParam(request.params, 'jobId', 'load');
    // Visible to the member (404 otherwise), as the job page is.
    await getJob(deps.db, workspaceReader(access.workspaceId), jobId, signing());
    const csv = await rejectedRowsCsv(deps.db, jobId);
    if (csv === undefined) throw problem('notFound', 'The load is gone (its dataset was deleted).');
    return reply
      .type('text/csv; charset=utf-8')
      .header('content-disposition', `attachment; filename="rejected-rows-${jobId}.csv"`)
      .send(Readable.from(csv));
  });
}
