// POST /auth/clientToken (app JWT) and GET /auth/me (either credential).
import type { FastifyInstance } from 'fastify';
import { mintAccessToken, PERMISSIONS } from '../../domain/identity/access-tokens.js';
import { getWorkspace } from '../../domain/identity/workspaces.js';
import { callerAppOf, requireAnyCredential } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { problems } from '../schemas/common.js';
import { ClientToken, ClientTokenBody, Me } from '../schemas/identity.js';
import { problem } from '../../errors.js';

/** Registers POST /auth/clientToken on an app-JWT scope. */
export function clientTokenRoutes(app: TypedApp, deps: ApiDeps): void {
  app.post(
    '/auth/clientToken',
    {
      schema: {
        summary: 'Mint an access token for one installation',
        tags: ['auth'],
        security: [{ appJwt: [] }],
        body: ClientTokenBody,
        response: { 200: ClientToken, ...problems(400, 401, 403) },
      },
    },
    async (request) =>
      mintAccessToken(deps.db, {
        appId: callerAppOf(request).id,
        installationId: request.body.installationId,
        workspaceKey: request.body.workspaceKey,
        permissions: request.body.permissions ?? [],
        ttlSeconds: deps.config.accessTokenTtlSeconds,
      }),
  );
}

/** Registers GET /auth/me in its own scope (it accepts both credentials). */
export function meRoutes(root: TypedApp, deps: ApiDeps): void {
  void root.register(async (scope: FastifyInstance) => {
    const app = scope as unknown as TypedApp;
    requireAnyCredential(app, deps);
    app.get(
      '/auth/me',
      {
        schema: {
          summary: 'Who the credential speaks for',
          tags: ['auth'],
          security: [{ appJwt: [] }, { accessToken: [] }],
          response: { 200: Me, ...problems(401) },
        },
      },
      async (request) => {
        const inst = request.installation;
        if (inst !== null) {
          return {
            userId: inst.ownerUserId,
            displayName: inst.ownerName,
            email: inst.ownerEmail,
            platformAppId: inst.appId,
            workspace: { workspaceId: inst.workspaceId, displayName: inst.workspaceName },
            permissions: inst.permissions,
          };
        }
        const callerApp = callerAppOf(request);
        if (callerApp.owner_workspace_id === null)
          throw problem('notFound', 'The app has no workspace of its own.');
        const workspace = await getWorkspace(deps.db, callerApp.owner_workspace_id);
        const owner = await deps.db
          .selectFrom('users')
          .selectAll()
          .where('id', '=', workspace.owner_user_id)
          .executeTakeFirstOrThrow();
        return {
          userId: owner.id,
          displayName: owner.display_name,
          email: owner.email,
          platformAppId: callerApp.id,
          workspace: { workspaceId: workspace.id, displayName: workspace.display_name },
          permissions: [...PERMISSIONS],
        };
      },
    );
  });
}
