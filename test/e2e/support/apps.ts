// The partner's side of a flow: an app made through the domain (as `dx apps create` does), its
// access tokens minted over HTTP, and API calls with them, so a browser flow can check what an
// action in the console did to an app (a disconnected app gets 404, a rotated key stops tokens);
// the app connects (as the operator does it from the CLI), defines datasets and loads files.
import { accessToken, onboardApp, type TestPartner } from '../../support/onboarding.js';
import { callApi as fixtureCallApi, type ApiResponse } from '../../support/fixture.js';
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

/** Calls /api/v1 over real HTTP with a bearer token (the fixture's own helper, at the console's address). */
export function callApi(
  c: ConsoleE2E,
  token: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResponse<unknown>> {
  return fixtureCallApi(c.url(''), token, method, path, body);
}

/** The app connects to a workspace as the operator does it (`dx installations create`). */
export async function connectApp(c: ConsoleE2E, app: TestPartner, workspaceId: number): Promise<number> {
  const out = await c.dx(
    'installations',
    'create',
    '--app',
    app.app.id,
    '--workspace',
    String(workspaceId),
    '--json',
  );
  return (JSON.parse(out) as { installationId: number }).installationId;
}

/** The app defines a dataset through the API; returns its id. */
export async function defineDataset(
  c: ConsoleE2E,
  token: string,
  name: string,
  properties: { name: string; type: string; required?: boolean }[],
  primaryKey?: string[],
): Promise<string> {
  const res = await callApi(c, token, 'POST', '/datasets', {
    name,
    schema: { properties, ...(primaryKey !== undefined ? { primaryKey } : {}) },
  });
  if (res.status !== 201) throw new Error(`define dataset: ${res.status} ${res.text}`);
  return (res.json as { datasetId: string }).datasetId;
}

/** The app loads a CSV file (upload URL, PUT) and waits for the job's end; returns the job id and status. */
export async function loadCsv(
  c: ConsoleE2E,
  token: string,
  datasetId: string,
  csv: string,
  maxBadRecords = 0,
): Promise<{ jobId: string; status: string }> {
  const upload = await callApi(
    c,
    token,
    'POST',
    `/datasets/${datasetId}/uploadUrl?maxBadRecords=${maxBadRecords}`,
    {
      contentType: 'csv',
    },
  );
  if (upload.status !== 202) throw new Error(`uploadUrl: ${upload.status} ${upload.text}`);
  const { url, jobId } = upload.json as { url: string; jobId: string };
  const put = await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: csv });
  if (put.status !== 200) throw new Error(`PUT: ${put.status} ${await put.text()}`);
  for (const until = Date.now() + 30_000; ;) {
    const job = await callApi(c, token, 'GET', `/datasets/jobs/${jobId}`);
    const status = (job.json as { currentStatus: { status: string } }).currentStatus.status;
    if (['Completed', 'Failed', 'Expired'].includes(status)) return { jobId, status };
    if (Date.now() > until) throw new Error(`job ${jobId} still ${status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
