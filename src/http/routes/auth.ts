// POST /auth/clientToken and GET /auth/me; both take either credential (an app JWT, or an access
// token: DXAPI clients open a nested context of an installation with the token they hold).
import type { FastifyInstance } from 'fastify';
import { appIdFields } from '../../domain/identity/app-id.js';
import { mintAccessToken, PERMISSIONS } from '../../domain/identity/access-tokens.js';
import { getUser } from '../../domain/identity/users.js';
import { asWorkspaceType, getWorkspace } from '../../domain/identity/workspaces.js';
import { appJwtOf, callerAppOf, identityEpochOf, requireAnyCredential } from '../auth.js';
import type { ApiDeps, TypedApp } from '../deps.js';
import { JSON_BODY_PROBLEMS, problems } from '../schemas/common.js';
import { ref } from '../schemas/components.js';
import { ClientToken, ClientTokenBody, installationIdOf, Me } from '../schemas/identity.js';
import { problem } from '../../errors.js';

/** Registers POST /auth/clientToken and GET /auth/me in their own scope (either credential). */
export function authRoutes(root: TypedApp, deps: ApiDeps): void {
  void root.register(async (scope: FastifyInstance) => {
    const app = scope as unknown as TypedApp;
    requireAnyCredential(app, deps);

    app.post(
      '/auth/clientToken',
      {
        schema: {
          summary: 'Mint an access token for one installation',
          description:
            "With the app's JWT: for any installation of the app. With an access token: a new token " +
            'for that same installation, never wider than the calling token (rights and expiry).',
          operationId: 'createClientToken',
          tags: ['auth'],
          security: [{ appJwt: [] }, { accessToken: [] }],
          body: ref(ClientTokenBody),
          response: { 200: ref(ClientToken), ...problems(...JSON_BODY_PROBLEMS, 401, 403, 404) },
        },
      },
      async (request) => {
        const within = request.installation;
        return mintAccessToken(
          deps.db,
          {
            appId: within?.appId ?? appJwtOf(request).app.id,
            appKeyKid: within === null ? appJwtOf(request).kid : null,
            installationId: installationIdOf(request.body.installationId),
            workspaceKey: request.body.workspaceKey,
            permissions: request.body.permissions ?? [],
            ttlSeconds: deps.config.accessTokenTtlSeconds,
            ...(within !== null ? { within } : {}),
          },
          { cache: deps.minting, epoch: identityEpochOf(request) },
        );
      },
    );

    app.get(
      '/auth/me',
      {
        schema: {
          summary: 'Who the credential speaks for',
          operationId: 'getMe',
          tags: ['auth'],
          security: [{ appJwt: [] }, { accessToken: [] }],
          response: { 200: ref(Me), ...problems(400, 401, 404) },
        },
      },
      async (request) => {
        const inst = request.installation;
        if (inst !== null) {
          return {
            userId: inst.ownerUserId,
            displayName: inst.ownerName,
            email: inst.ownerEmail,
            ...appIdFields(inst.appId),
            appId: inst.appId,
            dateTermsAccepted: null,
            workspace: {
              workspaceId: inst.workspaceId,
              displayName: inst.workspaceName,
              type: inst.workspaceType,
            },
            permissions: inst.permissions,
          };
        }
        const callerApp = callerAppOf(request);
        if (callerApp.owner_workspace_id === null)
          throw problem('notFound', 'The app has no workspace of its own.');
        const workspace = await getWorkspace(deps.db, callerApp.owner_workspace_id);
        const owner = await getUser(deps.db, workspace.owner_user_id);
        return {
          userId: owner.id,
          displayName: owner.display_name,
          email: owner.email,
          ...appIdFields(callerApp.id),
          appId: callerApp.id,
          dateTermsAccepted: null,
          workspace: {
            workspaceId: workspace.id,
            displayName: workspace.display_name,
            type: asWorkspaceType(workspace.type),
          },
          permissions: [...PERMISSIONS],
        };
      },
    );
  });
}
