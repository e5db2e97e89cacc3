// Builds the API on an isolated database and onboards apps and workspaces through the domain,
// so interface tests start from a known state and talk to the service over HTTP.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { loadConfig, type Config } from '../../src/config.js';
import { buildApp, type BuildOptions } from '../../src/http/app.js';
import { createServices } from '../../src/runtime/services.js';
import { createApp, type CreatedApp, type KeyAlgorithm } from '../../src/domain/identity/apps.js';
import { createWorkspace } from '../../src/domain/identity/workspaces.js';
import { connectInstallation } from '../../src/domain/identity/installations.js';
import { signAppJwt } from '../../src/domain/identity/app-jwt-signer.js';
import type { DatabaseTarget, IsolatedDatabase } from './databases.js';

export interface TestApp {
  app: FastifyInstance;
  config: Config;
  iso: IsolatedDatabase;
  close(): Promise<void>;
}

/** Builds the API on a fresh database of `target`; env overrides configure it. */
export async function startTestApp(
  target: DatabaseTarget,
  env: Record<string, string> = {},
  options: BuildOptions & { testRoutes?: (app: FastifyInstance) => void } = {},
): Promise<TestApp> {
  const iso = await target.create();
  const config = loadConfig({ DATA_DIR: iso.dataDir, DATABASE_URL: iso.url, LOG_LEVEL: 'silent', ...env });
  const { testRoutes, ...buildOptions } = options;
  const app = await buildApp(config, createServices(config, iso.database), {
    logger: false,
    ...buildOptions,
  });
  testRoutes?.(app);
  await app.ready();
  return {
    app,
    config,
    iso,
    close: async () => {
      await app.close();
      await iso.dispose();
    },
  };
}

/** An onboarded app with helpers to sign JWTs and mint access tokens over HTTP. */
export interface TestPartner extends CreatedApp {
  jwt(options?: { ttlSeconds?: number; issuedAt?: number; audience?: string }): Promise<string>;
}

/** Creates an app (with its own workspace and installation) directly in the database. */
export async function onboardApp(
  t: TestApp,
  name = 'Test App',
  alg: KeyAlgorithm = 'RS256',
): Promise<TestPartner> {
  const created = await createApp(t.iso.database.db, { name, alg });
  return {
    ...created,
    jwt: (o = {}) =>
      signAppJwt({ appId: created.app.id, privateKeyPem: created.privateKeyPem, kid: created.kid, ...o }),
  };
}

/** Creates a workspace and connects the given apps to it; returns its id, key and installation ids. */
export async function onboardWorkspace(
  t: TestApp,
  name: string,
  apps: TestPartner[],
): Promise<{ workspaceId: number; workspaceKey: string; installations: Map<string, number> }> {
  const { workspace, workspaceKey } = await createWorkspace(t.iso.database.db, { displayName: name });
  const installations = new Map<string, number>();
  for (const a of apps)
    installations.set(a.app.id, (await connectInstallation(t.iso.database.db, a.app.id, workspace.id)).id);
  return { workspaceId: workspace.id, workspaceKey, installations };
}

/** Mints an access token over HTTP (POST /api/v1/auth/clientToken) and returns it. */
export async function accessToken(
  t: TestApp,
  partner: TestPartner,
  installationId: number,
  workspaceKey: string,
  permissions: string[] = [],
): Promise<string> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/api/v1/auth/clientToken',
    headers: { authorization: `Bearer ${await partner.jwt()}` },
    payload: { tokenType: 'appInstallation', installationId, workspaceKey, permissions },
  });
  if (res.statusCode !== 200) throw new Error(`clientToken failed: ${res.statusCode} ${res.body}`);
  return res.json<{ token: string }>().token;
}

/** A token for the app's own installation, the usual starting point. */
export async function ownToken(
  t: TestApp,
  partner: TestPartner,
  permissions: string[] = [],
): Promise<string> {
  return accessToken(t, partner, partner.installationId, partner.workspaceKey, permissions);
}

/** Asserts nothing; returns the parsed problem body after checking the media type. */
export function problemOf(res: LightMyRequestResponse): {
  status: number;
  title: string;
  detail: string;
  errors: Record<string, string[]>;
  type: string;
  source: string;
  traceId: string;
} {
  const type = String(res.headers['content-type']);
  if (!type.startsWith('application/problem+json'))
    throw new Error(`expected a problem, got ${type}: ${res.body}`);
  return res.json();
}
