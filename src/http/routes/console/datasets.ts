// A workspace's datasets in the console: the list, one dataset, changing which apps can see it,
// and deleting it after a confirmation. Reads and changes go through the same domain functions as
// the API (a member reads as `workspaceReader`: every dataset of the workspace, whatever its tags).
import { datasetMadeBy } from '../../../domain/console/origins.js';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { problem } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import { consoleDb, type ConsoleDb } from '../../../domain/console/db.js';
import { audit, type Actor } from '../../../domain/console/audit.js';
import { requireChange, workspaceAccess, type WorkspaceAccess } from '../../../domain/console/access.js';
import {
  deleteDataset,
  findVisibleDataset,
  getDataset,
  listDatasetsByName,
  workspaceReader,
} from '../../../domain/datasets/datasets.js';
import { connectedApps, setDatasetTags } from '../../../domain/datasets/tags.js';
import { listDatasetJobs } from '../../../domain/jobs/jobs.js';
import { recordsPage } from '../../../domain/records/pages.js';
import { createExportLink, mediaTypeOf, openExport } from '../../../domain/records/export.js';
import { nowSeconds } from '../../../lib/time.js';
import { takeDownloadSlot } from '../../download-slots.js';
import { pageContext, requireSession, sendPage } from './context.js';
import { checkedValues, field } from './form.js';
import { namePageQuery } from './name-lists.js';
import { workspaceIdOf } from './workspaces.js';
import {
  datasetPage,
  DATASETS_PER_PAGE,
  datasetsPage,
  deleteDatasetPage,
  FIRST_RECORDS,
  RECENT_JOBS,
} from './pages-datasets.js';

/** An id made by the service (a UUID) from the path, or 404 before any query. */
export function idParam(params: unknown, name: 'datasetId' | 'jobId', what: string): string {
  const raw = (params as Record<string, string | undefined>)[name] ?? '';
  if (!/^[0-9a-f-]{36}$/i.test(raw)) throw problem('notFound', `There is no such ${what}.`);
  return raw;
}

/** The signed-in account, its access to the path's workspace (or 404), and who it is in the log. */
export async function accessOf(
  db: ConsoleDb,
  request: FastifyRequest,
): Promise<{ access: WorkspaceAccess; actor: Actor }> {
  const { account } = requireSession(request);
  const access = await workspaceAccess(db, account, workspaceIdOf(request.params));
  return { access, actor: { accountId: account.id, name: account.email } };
}

/** The `app` checkboxes of a form: none, one (a string) or several (an array). */
function checkedApps(body: unknown): string[] {
  const list = checkedValues(body, 'app');
  if (list === null)
    throw problem('invalid', 'The list of apps was not understood. Reload the page and try again.');
  return list;
}

/** What a page says after a change it was sent to by (`?done=`). */
const NOTICES = {
  saved: 'Saved. The page shows which apps can see this dataset now.',
  deleted: 'The dataset was deleted.',
} as const;
/** A page token from the query string, or null when there is none. */
function queryToken(query: unknown, name: string): string | null {
  const value = (query as Record<string, unknown>)[name];
  return typeof value === 'string' && value !== '' ? value : null;
}

function noticeOf(query: unknown): string | null {
  const done = (query as { done?: unknown }).done;
  return typeof done === 'string' && Object.hasOwn(NOTICES, done)
    ? NOTICES[done as keyof typeof NOTICES]
    : null;
}

/** /console/workspaces/:workspaceId/datasets[/:datasetId[/apps|/delete]]. */
export function consoleDatasetRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const signing = () => ({ publicUrl: deps.config.publicUrl, signingSecret: deps.signingSecret });
  const prefix = '/workspaces/:workspaceId/datasets';

  scope.get(prefix, async (request, reply) => {
    const { access } = await accessOf(db, request);
    const reader = workspaceReader(access.workspaceId);
    const { search, query } = namePageQuery(request.query, DATASETS_PER_PAGE);
    const [list, connected] = await Promise.all([
      listDatasetsByName(deps.db, reader, query),
      connectedApps(deps.db, access.workspaceId),
    ]);
    return sendPage(
      reply,
      200,
      datasetsPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        workspaceName: access.workspaceName,
        datasets: list.datasets,
        list: {
          href: `/console/workspaces/${access.workspaceId}/datasets`,
          search,
          later: query.after !== null,
          next: list.next,
          shown: list.datasets.length,
        },
        connected,
        notice: noticeOf(request.query),
      }),
    );
  });

  scope.get(`${prefix}/:datasetId`, async (request, reply) => {
    const { access } = await accessOf(db, request);
    const datasetId = idParam(request.params, 'datasetId', 'dataset');
    const reader = workspaceReader(access.workspaceId);
    const dataset = await getDataset(deps.db, reader, datasetId);
    // The API's own page tokens page the loads and the records, each on its own (a bad token is
    // the API's 400, shown as a page).
    const loadsToken = queryToken(request.query, 'loads');
    const recordsToken = queryToken(request.query, 'records');
    const [connected, jobs, records, madeBy] = await Promise.all([
      connectedApps(deps.db, access.workspaceId),
      listDatasetJobs(deps.db, reader, datasetId, signing(), {
        pageSize: String(RECENT_JOBS),
        ...(loadsToken !== null ? { pageToken: loadsToken } : {}),
      }),
      recordsPage(deps.db, deps.records, reader, datasetId, {
        pageSize: String(FIRST_RECORDS),
        ...(recordsToken !== null ? { pageToken: recordsToken } : {}),
      }),
      datasetMadeBy(deps.db, datasetId),
    ]);
    const page = datasetPage(pageContext(deps, request), {
      workspaceId: access.workspaceId,
      workspaceName: access.workspaceName,
      dataset,
      madeBy,
      connected,
      canChange: access.powers.canChange,
      uploadMaxBytes: deps.config.uploadMaxBytes,
      jobs: { page: jobs, later: loadsToken !== null },
      records: { page: records, later: recordsToken !== null },
      notice: noticeOf(request.query),
    });
    return sendPage(reply, 200, page);
  });

  scope.post(`${prefix}/:datasetId/apps`, async (request, reply) => {
    const { access, actor } = await accessOf(db, request);
    requireChange(access);
    const datasetId = idParam(request.params, 'datasetId', 'dataset');
    const reader = workspaceReader(access.workspaceId);
    const apps = checkedApps(request.body);
    const dataset = await getDataset(deps.db, reader, datasetId);
    // The tags and the audit row commit together.
    await deps.db.transaction().execute(async (trx) => {
      const { added, removed } = await setDatasetTags(trx, access.workspaceId, datasetId, apps);
      if (added.length + removed.length === 0) return;
      const names = (tags: { name: string }[]) => tags.map((t) => t.name).join(', ');
      const change = [
        added.length > 0 ? `shared with ${names(added)}` : '',
        removed.length > 0 ? `no longer with ${names(removed)}` : '',
      ].filter((s) => s !== '');
      await audit(consoleDb(trx), actor, 'dataset.apps_changed', {
        workspaceId: access.workspaceId,
        detail: `${dataset.name} (${datasetId}): ${change.join('; ')}`,
      });
    });
    return reply.redirect(`/console/workspaces/${access.workspaceId}/datasets/${datasetId}?done=saved`, 303);
  });

  // Every record as CSV, as records:retrieve's link gives it (the same pinned table and renderer),
  // to a signed-in member: no signed link on the page (see the rejected rows in jobs.ts).
  scope.get(`${prefix}/:datasetId/records.csv`, async (request, reply) => {
    const { access } = await accessOf(db, request);
    const datasetId = idParam(request.params, 'datasetId', 'dataset');
    const ds = await findVisibleDataset(deps.db, workspaceReader(access.workspaceId), datasetId);
    const release = takeDownloadSlot(deps.downloads);
    reply.raw.once('close', release);
    try {
      const link = await createExportLink(deps.db, ds, 'csv', nowSeconds());
      const body = await openExport(deps.db, deps.records, ds.id, link.id, 'csv');
      if (body === null) throw problem('notFound', 'The dataset is gone.');
      return reply
        .type(mediaTypeOf('csv'))
        .header('content-disposition', `attachment; filename="${ds.id}.csv"`)
        .send(body);
    } catch (err) {
      release();
      throw err;
    }
  });

  scope.get(`${prefix}/:datasetId/delete`, async (request, reply) => {
    const { access } = await accessOf(db, request);
    requireChange(access);
    const datasetId = idParam(request.params, 'datasetId', 'dataset');
    const reader = workspaceReader(access.workspaceId);
    const [dataset, connected] = await Promise.all([
      getDataset(deps.db, reader, datasetId),
      connectedApps(deps.db, access.workspaceId),
    ]);
    return sendPage(
      reply,
      200,
      deleteDatasetPage(pageContext(deps, request), {
        workspaceId: access.workspaceId,
        workspaceName: access.workspaceName,
        dataset,
        connected,
        error: null,
      }),
    );
  });

  scope.post(`${prefix}/:datasetId/delete`, async (request, reply) => {
    const { access, actor } = await accessOf(db, request);
    requireChange(access);
    const datasetId = idParam(request.params, 'datasetId', 'dataset');
    const reader = workspaceReader(access.workspaceId);
    const dataset = await getDataset(deps.db, reader, datasetId);
    if (field(request.body, 'confirmName').trim() !== dataset.name.trim()) {
      const connected = await connectedApps(deps.db, access.workspaceId);
      return sendPage(
        reply,
        400,
        deleteDatasetPage(pageContext(deps, request), {
          workspaceId: access.workspaceId,
          workspaceName: access.workspaceName,
          dataset,
          connected,
          error: 'The name you typed is not the dataset’s name, so nothing was deleted.',
        }),
      );
    }
    // The dataset's row and the audit row commit together; its tables and files go after.
    await deleteDataset(deps.db, deps, reader, datasetId, (trx) =>
      audit(consoleDb(trx), actor, 'dataset.deleted', {
        workspaceId: access.workspaceId,
        detail: `${dataset.name} (${datasetId}), ${dataset.recordCount} records`,
      }),
    );
    return reply.redirect(`/console/workspaces/${access.workspaceId}/datasets?done=deleted`, 303);
  });
}
