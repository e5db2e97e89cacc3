// GET/POST /apps/me/installations: the app's installations, with its own JWT.
import { callerAppOf } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { ConnectInstallationBody, Installation, InstallationList } from '../schemas/identity.js';
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
        operationId: 'listInstallations',
        tags: ['installations'],
        security: [{ appJwt: [] }],
        response: { 200: ref(InstallationList), ...problems(400, 401) },
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
        operationId: 'connectInstallation',
        tags: ['installations'],
        security: [{ appJwt: [] }],
        body: ref(ConnectInstallationBody),
        response: {
          200: ref(Installation, { description: 'Already connected: the installation' }),
          201: ref(Installation, { description: 'Connected: the new installation' }),
          ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404),
        },
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
