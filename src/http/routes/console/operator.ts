// The operator's pages under /console/operator: the start page with the service's health at a
// glance, and the registration of the apps, workspaces and proxy-ID pages.
import type { FastifyInstance } from 'fastify';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import {
  countJobsFailedSince,
  countJobsInState,
  oldestQueuedSince,
  runningLeases,
} from '../../../domain/jobs/counts.js';
import { packageVersion } from '../../../lib/version.js';
import type { Engine } from '../../../storage/db/database.js';
import { pageContext, sendPage } from './context.js';
import { requireOperator } from './operator-common.js';
import { operatorAccountRoutes } from './operator-accounts.js';
import { operatorAppRoutes } from './operator-apps.js';
import { operatorProxyIdRoutes } from './operator-proxy-ids.js';
import { operatorWorkspaceRoutes } from './operator-workspaces.js';
import { operatorHomePage } from './pages-operator.js';

const DAY_MS = 24 * 60 * 60 * 1000;

const ENGINE_NAMES: Record<Engine['kind'], string> = { sqlite: 'SQLite', postgres: 'PostgreSQL' };

/** "3 d 4 h", "2 h 5 min", "42 s": how long the process has run, to the unit that matters. */
export function formatUptime(seconds: number): string {
  const s = Math.floor(seconds);
  const d = Math.floor(s / 86_400);
  const h = Math.floor((s % 86_400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d > 0) return `${d} d ${h} h`;
  if (h > 0) return `${h} h ${m} min`;
  if (m > 0) return `${m} min`;
  return `${s} s`;
}

/** Registers every operator page on the console scope. */
export function operatorRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  scope.get('/operator', async (request, reply) => {
    requireOperator(request);
    const now = Date.now();
    const [queued, running, failedLastDay, oldestQueued, leases] = await Promise.all([
      countJobsInState(deps.db, 'Queued'),
      countJobsInState(deps.db, 'Running'),
      countJobsFailedSince(deps.db, now - DAY_MS),
      oldestQueuedSince(deps.db),
      runningLeases(deps.db, now),
    ]);
    const uptime = process.uptime();
    return sendPage(
      reply,
      200,
      operatorHomePage(pageContext(deps, request), {
        queued,
        running,
        failedLastDay,
        ...leases,
        oldestQueued:
          oldestQueued === null
            ? null
            : { since: oldestQueued, waited: formatUptime((now - Date.parse(`${oldestQueued}Z`)) / 1000) },
        engine: ENGINE_NAMES[deps.database.engine.kind],
        version: packageVersion(),
        startedAt: new Date(now - uptime * 1000),
        uptime: formatUptime(uptime),
      }),
    );
  });
  operatorAppRoutes(scope, deps);
  operatorWorkspaceRoutes(scope, deps, db);
  operatorProxyIdRoutes(scope, deps);
  operatorAccountRoutes(scope, deps, db);
}
