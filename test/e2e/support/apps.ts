// The partner's side of a flow: an app made through the domain (as `dx apps create` does), its
// access tokens minted over HTTP, and API calls with them, so a browser flow can check what an
// action in the console did to an app (a disconnected app gets 404, a rotated key stops tokens).
import { accessToken, onboardApp, type TestPartner } from '../../support/onboarding.js';
import type { ConsoleE2E } from './harness.js';

export type { TestPartner };

/** A new app with its own workspace and installation (what `dx apps create` makes). */
export function newApp(c: ConsoleE2E, name = 'Canvass App'): Promise<TestPartner> {
  return onboardApp(c.fixture, name, 'ES256');
}

/** An access token of `app`'s installation, minted with the workspace's key. */
export function tokenFor(
  c: ConsoleE2E,
  app: TestPartner,
  installationId: number,
  workspaceKey: string,
  permissions: string[] = [],
): Promise<string> {
  return accessToken(c.fixture, app, installationId, workspaceKey, permissions);
}

/** Calls /api/v1 over real HTTP with a bearer token; returns the status and the parsed body. */
export async function callApi(
  c: ConsoleE2E,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: unknown }> {
  const res = await fetch(c.url(`/api/v1${path}`), {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(text);
  } catch {
    json = text;
  }
  return { status: res.status, json };
}
