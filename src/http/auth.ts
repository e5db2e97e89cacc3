// Authentication hooks, put on a group of routes (an encapsulated scope), never repeated per route.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppRow } from '../storage/db/tables.js';
import { problem } from '../errors.js';
import { verifyAppJwt, type VerifiedAppJwt } from '../domain/identity/app-jwt.js';
import {
  ACCESS_TOKEN_PREFIX,
  authenticateAccessToken,
  type InstallationPrincipal,
  type Permission,
} from '../domain/identity/access-tokens.js';
import type { ApiDeps } from './deps.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on routes authenticated with the app's own JWT. */
    appJwt: VerifiedAppJwt | null;
    /** Set on routes authenticated with an installation access token. */
    installation: InstallationPrincipal | null;
  }
}

/** The bearer credential of a request, or a 401 problem. */
export function bearerToken(request: FastifyRequest): string {
  const header = request.headers.authorization;
  if (header === undefined || header === '')
    throw problem('unauthenticated', 'The Authorization header is missing.', {
      code: 'authorization_missing',
    });
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (match?.[1] === undefined)
    throw problem('unauthenticated', 'The Authorization header must be "Bearer <token>".', {
      code: 'authorization_missing',
    });
  return match[1];
}

/** Declares the request properties the hooks fill in; call once on the root instance. */
export function decorateAuth(app: FastifyInstance): void {
  app.decorateRequest('appJwt', null);
  app.decorateRequest('installation', null);
}

/** Every route of `scope` requires an app JWT. */
export function requireAppJwt(scope: FastifyInstance, deps: ApiDeps): void {
  scope.addHook('onRequest', async (request) => {
    const token = bearerToken(request);
    request.epochs = await deps.epochReads.epochs();
    request.appJwt = await verifyAppJwt(
      deps.db,
      token,
      { audience: deps.config.jwtAudience },
      { cache: deps.credentials.appJwts, epoch: request.epochs.identity },
    );
  });
}

/** Every route of `scope` requires an access token; reads need datasets:read, writes datasets:write. */
export function requireAccessToken(scope: FastifyInstance, deps: ApiDeps): void {
  scope.addHook('onRequest', async (request) => {
    const token = bearerToken(request);
    // Read first, once: what the credential resolved to and any kept answer are reused only while
    // the epochs stay as read here (credential-cache.ts, read-cache.ts).
    request.epochs = await deps.epochReads.epochs();
    const principal = await authenticateAccessToken(deps.db, token, {
      cache: deps.credentials.accessTokens,
      epoch: request.epochs.identity,
    });
    const needed: Permission =
      request.method === 'GET' || request.method === 'HEAD' ? 'datasets:read' : 'datasets:write';
    if (!principal.permissions.includes(needed)) {
      throw problem('forbidden', `This access token lacks the ${needed} permission.`, {
        code: 'permission_missing',
      });
    }
    request.installation = principal;
  });
}

/** Either credential: access tokens are told apart from JWTs by their prefix. */
export function requireAnyCredential(scope: FastifyInstance, deps: ApiDeps): void {
  scope.addHook('onRequest', async (request) => {
    const token = bearerToken(request);
    request.epochs = await deps.epochReads.epochs();
    const epoch = request.epochs.identity;
    if (token.startsWith(ACCESS_TOKEN_PREFIX))
      request.installation = await authenticateAccessToken(deps.db, token, {
        cache: deps.credentials.accessTokens,
        epoch,
      });
    else
      request.appJwt = await verifyAppJwt(
        deps.db,
        token,
        { audience: deps.config.jwtAudience },
        { cache: deps.credentials.appJwts, epoch },
      );
  });
}

/** The installation principal of an access-token route (set by requireAccessToken). */
export function installationOf(request: FastifyRequest): InstallationPrincipal {
  if (request.installation === null)
    throw problem('unauthenticated', 'An access token is required.', { code: 'authorization_missing' });
  return request.installation;
}

/** The app of an app-JWT route (set by requireAppJwt). */
export function callerAppOf(request: FastifyRequest): AppRow {
  return appJwtOf(request).app;
}

/** The verified JWT of an app-JWT route: its app and the key that signed it. */
export function appJwtOf(request: FastifyRequest): VerifiedAppJwt {
  if (request.appJwt === null)
    throw problem('unauthenticated', 'An app JWT is required.', { code: 'authorization_missing' });
  return request.appJwt;
}

/** The identity epoch every credential hook reads before resolving the credential. */
export function identityEpochOf(request: FastifyRequest): number {
  if (request.epochs === null) throw new Error('no epochs read: the route is outside every credential scope');
  return request.epochs.identity;
}
