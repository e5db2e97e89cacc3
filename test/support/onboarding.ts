// Onboarding through the domain (apps, workspaces, installations) and access tokens minted over
// HTTP, so interface tests start from a known state and hold the credentials partners would.
import type { LightMyRequestResponse } from 'fastify';
import { createApp, type CreatedApp, type KeyAlgorithm } from '../../src/domain/identity/apps.js';
import { createWorkspace } from '../../src/domain/identity/workspaces.js';
import { connectInstallation } from '../../src/domain/identity/installations.js';
import { signAppJwt } from '../../src/domain/identity/app-jwt-signer.js';
import type { Fixture } from './fixture.js';

/** What onboarding needs of a fixture: its database, and its API to mint tokens. */
type Service = Pick<Fixture, 'database' | 'app'>;

/** An onboarded app with helpers to sign JWTs and mint access tokens over HTTP. */
export interface TestPartner extends CreatedApp {
  jwt(options?: { ttlSeconds?: number; issuedAt?: number; audience?: string }): Promise<string>;
}

/** Creates an app (with its own workspace and installation) directly in the database. */
export async function onboardApp(
  f: Service,
  name = 'Test App',
  alg: KeyAlgorithm = 'RS256',
): Promise<TestPartner> {
  const created = await createApp(f.database.db, { name, alg });
  return {
    ...created,
    jwt: (o = {}) =>
      signAppJwt({ appId: created.app.id, privateKeyPem: created.privateKeyPem, kid: created.kid, ...o }),
  };
}

/** Creates a workspace and connects the given apps to it; returns its id, key and installation ids. */
export async function onboardWorkspace(
  f: Service,
  name: string,
  apps: TestPartner[],
): Promise<{ workspaceId: number; workspaceKey: string; installations: Map<string, number> }> {
  const { workspace, workspaceKey } = await createWorkspace(f.database.db, { displayName: name });
  const installations = new Map<string, number>();
  for (const a of apps)
    installations.set(a.app.id, (await connectInstallation(f.database.db, a.app.id, workspace.id)).id);
  return { workspaceId: workspace.id, workspaceKey, installations };
}

/** Mints an access token over HTTP (POST /api/v1/auth/clientToken) and returns it. */
export async function accessToken(
  f: Service,
  partner: TestPartner,
  installationId: number,
  workspaceKey: string,
  permissions: string[] = [],
): Promise<string> {
  const res = await f.app.inject({
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
  f: Service,
  partner: TestPartner,
  permissions: string[] = [],
): Promise<string> {
  return accessToken(f, partner, partner.installationId, partner.workspaceKey, permissions);
}

/** Asserts nothing; returns the parsed problem body after checking the media type. */
export function problemOf(res: LightMyRequestResponse): {
  status: number;
  title: string;
  code: string;
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

/** A call to /api/v1 with an app's access token, through the fixture's app (no socket). */
export async function callApi(
  service: Pick<Fixture, 'app'>,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: () => Record<string, unknown>; text: string }> {
  const res = await service.app.inject({
    method: method as 'GET',
    url: `/api/v1${path}`,
    headers: { authorization: `Bearer ${token}` },
    ...(body !== undefined ? { payload: body as Record<string, unknown> } : {}),
  });
  return { status: res.statusCode, json: () => res.json<Record<string, unknown>>(), text: res.body };
}
