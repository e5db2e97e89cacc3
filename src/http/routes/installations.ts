// GET/POST /apps/me/installations: the app's installations, with its own JWT.
import { callerAppOf } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { Envelope, problems } from '../schemas/common.js';
import { ConnectInstallationBody, Installation } from '../schemas/identity.js';
import {
  connectWithWorkspaceKey,
  getInstallation,
  listInstallations,
} from '../../domain/identity/installations.js';

/** Registers the installation routes on an app-JWT scope. */
export function installationRoutes(app: TypedApp, deps: ApiDeps): void {
  app.get(
    '/apps/me/installations',
    {
      schema: {
        summary: "List the app's installations (its own workspace's included)",
        tags: ['installations'],
        security: [{ appJwt: [] }],
        response: { 200: Envelope(Installation), ...problems(401) },
      },
    },
    async (request) => {
      const data = await listInstallations(deps.db, { appId: callerAppOf(request).id });
      return { metadata: { count: data.length }, data };
    },
  );

  app.post(
    '/apps/me/installations',
    {
      schema: {
        summary: 'Connect the app to a workspace with its Workspace ID and Key (idempotent)',
        tags: ['installations'],
        security: [{ appJwt: [] }],
        body: ConnectInstallationBody,
        response: { 200: Installation, 201: Installation, ...problems(400, 401, 403) },
      },
    },
    async (request, reply) => {
      const appId = callerAppOf(request).id;
      const { workspaceId, workspaceKey } = request.body;
      const before = await listInstallations(deps.db, { appId });
      const row = await connectWithWorkspaceKey(deps.db, appId, workspaceId, workspaceKey);
      const created = !before.some((i) => i.installationId === row.id);
      return reply.code(created ? 201 : 200).send(await getInstallation(deps.db, row.id));
    },
  );
}
