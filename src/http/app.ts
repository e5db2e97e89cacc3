// buildApp(config, services): the API server with every route, built and returned; entry points
// only listen and handle signals.
import { randomUUID } from 'node:crypto';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { decorateAuth, requireAccessToken, requireAppJwt } from './auth.js';
import { decorateReadCache, ReadCache, serveFromReadCache } from './read-cache.js';
import { DownloadSlots } from './download-slots.js';
import { acceptEmptyJsonBodies, refuseNonJsonBodies } from './body.js';
import { refuseNulInUrls } from './nul-characters.js';
import { clientErrorHandler } from './client-errors.js';
import { frameworkErrorHandler, requireHostHeader } from './framework-errors.js';
import type { ApiDeps, TypedApp } from './deps.js';
import { CredentialCache } from '../domain/identity/credential-cache.js';
import { tokenMinting } from '../domain/identity/access-tokens.js';
import { sharedEpochReads } from '../domain/identity/epoch-reads.js';
import { sharedSerializers } from './serializers.js';
import { installProblemHandlers } from './problems.js';
import { authRoutes } from './routes/auth.js';
import { datasetRoutes } from './routes/datasets.js';
import { datasetTagRoutes } from './routes/dataset-tags.js';
import { healthRoutes } from './routes/health.js';
import { installationRoutes } from './routes/installations.js';
import { webhookRoutes } from './routes/webhooks.js';
import { jobRoutes } from './routes/jobs.js';
import { loadingRoutes } from './routes/loading.js';
import { recordRoutes } from './routes/records.js';
import { changeRoutes } from './routes/changes.js';
import { storageNotificationRoutes } from './routes/storage-notifications.js';
import { uploadReceiverRoutes } from './routes/uploads.js';
import { downloadRoutes } from './routes/downloads.js';
import { rejectedRowsRoutes } from './routes/rejected-rows.js';
import { consoleRoutes } from './routes/console/index.js';
import { openApiDocument, openApiRoute } from './openapi.js';
import { COMPONENTS } from './schemas/index.js';
import { DOCUMENTED_AS } from './schemas/components.js';
import { requestMetrics } from './metrics.js';
import { AccessLogController, ApiAccessLines } from './access-log.js';
import { createLogger, roleLogger, type Logger } from '../lib/logger.js';
import { addTraceFields, isSafeRequestId } from '../lib/request-id.js';
import type { Config, TrustProxy } from '../config.js';
import type { Services } from '../domain/services.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** `METHOD /path` of every registered route. */
    routeTable: string[];
  }
}

export const API_PREFIX = '/api/v1';

export interface BuildOptions {
  /** The API role's logger (lib/logger.ts); default: a new one at LOG_LEVEL; `false` silences logs (tests). */
  logger?: Logger | false;
  /** More Prometheus text for /metrics (the proxy's cluster workers). */
  extraMetrics?: () => Promise<string>;
  /** Whether the process is shutting down (/readyz then answers 503). */
  draining?: () => boolean;
  /** /metrics is served on an admin port of its own (admin-server.ts), not on the API's. */
  metricsOnAdminPort?: boolean;
  bodyLimit?: number;
}

/** Builds the API server: error handling, auth scopes, routes, OpenAPI, metrics. */
export async function buildApp(
  config: Config,
  services: Services,
  options: BuildOptions = {},
): Promise<FastifyInstance> {
  const deps: ApiDeps = {
    config,
    ...services,
    db: services.database.db,
    credentials: { accessTokens: new CredentialCache(), appJwts: new CredentialCache() },
    epochReads: sharedEpochReads(services.database.db),
    minting: tokenMinting(services.database, new CredentialCache()),
    readCache: new ReadCache(),
    downloads: new DownloadSlots(config.exportDownloadsMax),
    ...(options.extraMetrics !== undefined ? { extraMetrics: options.extraMetrics } : {}),
    ...(options.draining !== undefined ? { draining: options.draining } : {}),
    ...(options.metricsOnAdminPort !== undefined ? { metricsOnAdminPort: options.metricsOnAdminPort } : {}),
  };
  const roleLog: Logger | false = options.logger ?? roleLogger(createLogger(config.logLevel), 'api');
  // Requests log through the role's logger (childLoggerFactory below). Fastify's own info lines
  // (a "Server listening at" per address) are left out at info, as `dx serve`'s banner names the
  // address bound; at debug and trace Fastify writes all it has.
  const logger: FastifyBaseLogger | false = roleLog;
  const frameworkLog: FastifyBaseLogger | false =
    roleLog === false || roleLog.isLevelEnabled('debug') || !roleLog.isLevelEnabled('warn')
      ? roleLog
      : roleLog.child({}, { level: 'warn' });
  // Access lines formatted and batched here, written out when the API closes (access-log.ts).
  const accessLines = roleLog === false ? null : new ApiAccessLines(roleLog);
  const app = Fastify({
    ...(frameworkLog !== false ? { loggerInstance: frameworkLog } : {}),
    bodyLimit: options.bodyLimit ?? 1024 * 1024,
    requestIdHeader: false,
    // One access line per request, not Fastify's incoming and completed pair.
    logController: new AccessLogController(accessLines),
    // request.ip (logs, the console's sign-in limit) from X-Forwarded-For only behind trusted proxies.
    ...trustProxyOption(config.trustProxy),
    // The caller's (or the proxy's) X-Request-Id when safe, by the proxy's rule, so both log the same id.
    genReqId: (req) => {
      const given = req.headers['x-request-id'];
      return typeof given === 'string' && isSafeRequestId(given) ? given : randomUUID();
    },
    // W3C trace context on every line of a request, when well formed (a caller's junk is not logged).
    childLoggerFactory: (parent, bindings, opts, req) => {
      addTraceFields(req.headers, bindings);
      return (logger !== false ? logger : parent).child(bindings, opts);
    },
    routerOptions: { ignoreTrailingSlash: true },
    clientErrorHandler,
    frameworkErrors: frameworkErrorHandler,
    http: { requireHostHeader: false },
    // One response serializer per distinct schema, not per route and status (serializers.ts).
    schemaController: { compilersFactory: { buildSerializer: sharedSerializers() } },
    ajv: {
      customOptions: {
        removeAdditional: false,
        coerceTypes: false,
        allErrors: true,
        // An annotation for the OpenAPI document only (schemas/components.ts, queryText).
        keywords: [DOCUMENTED_AS],
      },
    },
  }).withTypeProvider<TypeBoxTypeProvider>();

  if (accessLines !== null) app.addHook('onClose', () => accessLines.flush());

  // Every route with its methods, so tests can hold the OpenAPI document to the real route table.
  const routes: string[] = [];
  app.decorate('routeTable', routes);
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const m of methods) if (m !== 'HEAD') routes.push(`${m} ${route.url}`);
  });
  app.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
    // Shutting down: keep-alive clients move on to another process after this answer.
    if (deps.draining?.() === true) void reply.header('connection', 'close');
  });
  installProblemHandlers(app);
  requireHostHeader(app);
  acceptEmptyJsonBodies(app);
  refuseNonJsonBodies(app);
  refuseNulInUrls(app);
  decorateAuth(app);
  decorateReadCache(app);
  requestMetrics(app, deps.metrics);

  // The named schemas of the OpenAPI document, which routes use through ref() (docs/api.md).
  for (const schema of COMPONENTS) app.addSchema(schema);
  await app.register(swagger, openApiDocument(deps.config));
  healthRoutes(app, deps);
  // Signed URLs and the store's webhook carry their own credential: mounted at the root.
  uploadReceiverRoutes(app, deps);
  downloadRoutes(app, deps);
  rejectedRowsRoutes(app, deps);
  storageNotificationRoutes(app, deps);
  // The web console: HTML pages for people, in a scope of its own (cookies, forms, HTML errors).
  await app.register(async (scope) => consoleRoutes(scope, deps), { prefix: '/console' });

  await app.register(
    async (api) => {
      const v1 = api as unknown as TypedApp;
      openApiRoute(v1, () => app.swagger());
      authRoutes(v1, deps);
      await v1.register(async (scope) => {
        const s = scope as unknown as TypedApp;
        requireAppJwt(s, deps);
        installationRoutes(s, deps);
        webhookRoutes(s, deps);
      });
      await v1.register(async (scope) => {
        const s = scope as unknown as TypedApp;
        requireAccessToken(s, deps);
        serveFromReadCache(s, deps.readCache, deps.metrics);
        datasetRoutes(s, deps);
        datasetTagRoutes(s, deps);
        loadingRoutes(s, deps);
        jobRoutes(s, deps);
        recordRoutes(s, deps);
        changeRoutes(s, deps);
      });
    },
    { prefix: API_PREFIX },
  );
  return app;
}

/** Fastify's trustProxy for TRUST_PROXY; a hop count as the function Fastify itself makes of one
 * (its types take no number). */
function trustProxyOption(trust: TrustProxy): {
  trustProxy?: string[] | ((address: string, hop: number) => boolean);
} {
  if (trust === false) return {};
  if (typeof trust === 'number') return { trustProxy: (_address, hop) => hop < trust };
  return { trustProxy: trust };
}
