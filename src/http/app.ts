// buildApp(config, deps): the API server, built and returned; entry points only listen and handle signals.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { decorateAuth, requireAccessToken, requireAppJwt } from './auth.js';
import { acceptEmptyJsonBodies } from './body.js';
import { clientErrorHandler } from './client-errors.js';
import type { ApiDeps, TypedApp } from './deps.js';
import { installProblemHandlers } from './problems.js';
import { authRoutes } from './routes/auth.js';
import { datasetRoutes } from './routes/datasets.js';
import { datasetTagRoutes } from './routes/dataset-tags.js';
import { healthRoutes } from './routes/health.js';
import { installationRoutes } from './routes/installations.js';
import { openApiDocument } from './openapi.js';
import { requestMetrics } from './metrics.js';
import { createLogger, roleLogger, type Logger } from '../lib/logger.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** `METHOD /path` of every registered route. */
    routeTable: string[];
  }
}

export const API_PREFIX = '/api/v1';
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Extra route groups registered under /api/v1 by later modules (loading, jobs, records). */
export type RouteGroup = (scope: TypedApp, deps: ApiDeps) => void;

export interface BuildOptions {
  /** The API role's logger (lib/logger.ts); default: a new one at LOG_LEVEL; `false` silences logs (tests). */
  logger?: Logger | false;
  /** Route groups that need an access token (mounted under /api/v1). */
  accessTokenRoutes?: RouteGroup[];
  /** Route groups without authentication of their own (mounted at the root: signed URLs). */
  publicRoutes?: RouteGroup[];
  bodyLimit?: number;
}

/** Builds the API server: error handling, auth scopes, routes, OpenAPI, metrics. */
export async function buildApp(deps: ApiDeps, options: BuildOptions = {}): Promise<FastifyInstance> {
  const logger: FastifyBaseLogger | false =
    options.logger ?? roleLogger(createLogger(deps.config.logLevel), 'api');
  const app = Fastify({
    ...(logger !== false ? { loggerInstance: logger } : {}),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestIdHeader: false,
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    routerOptions: { ignoreTrailingSlash: true },
    clientErrorHandler,
    ajv: { customOptions: { removeAdditional: false, coerceTypes: false, allErrors: true } },
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Every route with its methods, so tests can hold the OpenAPI document to the real route table.
  const routes: string[] = [];
  app.decorate('routeTable', routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) if (m !== 'HEAD') routes.push(`${m} ${route.url}`);
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  installProblemHandlers(app);
  acceptEmptyJsonBodies(app);
  decorateAuth(app);
  requestMetrics(app, deps.metrics);

  await app.register(swagger, openApiDocument(deps.config.publicUrl));
  healthRoutes(app, deps);
  for (const group of options.publicRoutes ?? []) group(app, deps);

  await app.register(
    async (api) => {
      const v1 = api as unknown as TypedApp;
      v1.get('/openapi.json', { schema: { hide: true } }, async () => app.swagger());
      authRoutes(v1, deps);
      await v1.register(async (scope) => {
        const s = scope as unknown as TypedApp;
        requireAppJwt(s, deps);
        installationRoutes(s, deps);
      });
      await v1.register(async (scope) => {
        const s = scope as unknown as TypedApp;
        requireAccessToken(s, deps);
        datasetRoutes(s, deps);
        datasetTagRoutes(s, deps);
        for (const group of options.accessTokenRoutes ?? []) group(s, deps);
      });
    },
    { prefix: API_PREFIX },
  );
  return app;
}
