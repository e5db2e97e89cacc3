// `npm run console:screenshots`: starts the service on a fresh SQLite database seeded with one
// campaign's workspace and its people, opens the console's main pages in Debian's Chromium at a
// desktop width and at 375 px, and saves PNGs to docs/console/ (docs/console.md shows them).
// A new page is one more entry in SHOTS.
import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { loadConfig } from '../src/config.js';
import { startService, type RunningService } from '../src/runtime/service.js';
import { consoleDb } from '../src/domain/console/db.js';
import { CLI_ACTOR } from '../src/domain/console/audit.js';
import {
  acceptInvitation,
  createOperatorWithPassword,
  invitationLink,
  inviteMember,
} from '../src/domain/console/people.js';
import { createWorkspace } from '../src/domain/identity/workspaces.js';
import type { ConsoleRole } from '../src/domain/console/roles.js';
import { connectInstallation } from '../src/domain/identity/installations.js';
import { chromiumProblem, launchChromium } from '../test/e2e/support/chromium.js';
import { accessToken, onboardApp } from '../test/support/onboarding.js';

const OUT = join(process.cwd(), 'docs', 'console');
const PASSWORD = 'correct horse battery staple';
const VIEWPORTS = { desktop: { width: 1024, height: 700 }, phone: { width: 375, height: 700 } } as const;

/** Who looks at a page: nobody signed in, or one of the seeded people. */
type Who = 'nobody' | 'owner' | 'viewer' | 'operator';

interface Seed {
  workspaceId: number;
  /** A dataset of the workspace, shared with two apps, with a completed and a failed load. */
  datasetId: string;
  /** The failed load (a row error at line 3). */
  failedJobId: string;
  inviteLink: () => Promise<string>;
}

interface Shot {
  /** File name stem: docs/console/<name>-<desktop|phone>.png */
  name: string;
  who: Who;
  /** Opens the page (and fills in what makes it representative). */
  open(page: Page, seed: Seed): Promise<unknown>;
}

/** The main pages; add a page here and re-run. */
const SHOTS: Shot[] = [
  { name: 'sign-in', who: 'nobody', open: (p) => p.goto('/console/sign-in') },
  { name: 'accept-invitation', who: 'nobody', open: async (p, s) => p.goto(await s.inviteLink()) },
  { name: 'home-operator', who: 'operator', open: (p) => p.goto('/console/home') },
  { name: 'workspace-owner', who: 'owner', open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}`) },
  { name: 'workspace-viewer', who: 'viewer', open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}`) },
  {
    name: 'datasets',
    who: 'owner',
    open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}/datasets`),
  },
  {
    name: 'dataset',
    who: 'owner',
    open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}/datasets/${s.datasetId}`),
  },
  {
    name: 'load-failed',
    who: 'owner',
    open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}/jobs/${s.failedJobId}`),
  },
  { name: 'workspace-key', who: 'owner', open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}/key`) },
  {
    name: 'connected-apps',
    who: 'owner',
    open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}/apps`),
  },
  { name: 'members', who: 'owner', open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}/members`) },
  { name: 'account', who: 'owner', open: (p) => p.goto('/console/account') },
  { name: 'audit-log', who: 'owner', open: (p, s) => p.goto(`/console/workspaces/${s.workspaceId}/audit`) },
  { name: 'operator', who: 'operator', open: (p) => p.goto('/console/operator') },
  { name: 'operator-apps', who: 'operator', open: (p) => p.goto('/console/operator/apps') },
  { name: 'operator-workspaces', who: 'operator', open: (p) => p.goto('/console/operator/workspaces') },
  { name: 'operator-proxy-ids', who: 'operator', open: (p) => p.goto('/console/operator/proxy-ids') },
  { name: 'operator-accounts', who: 'operator', open: (p) => p.goto('/console/operator/accounts') },
  {
    name: 'invitation-created',
    who: 'owner',
    open: async (p, s) => {
      await p.goto(`/console/workspaces/${s.workspaceId}`);
      await p.getByLabel('Email').fill('field.organizer@riverside.example');
      await p.getByLabel('Role').selectOption({ label: 'Viewer' });
      await p.getByRole('button', { name: 'Create invitation link' }).click();
      await p.getByRole('heading', { name: /Invitation link/ }).waitFor();
    },
  },
];

const PEOPLE: Record<
  Exclude<Who, 'nobody' | 'operator'>,
  { email: string; name: string; role: ConsoleRole }
> = {
  owner: { email: 'dana.manager@riverside.example', name: 'Dana Manager', role: 'owner' },
  viewer: { email: 'sam.volunteer@riverside.example', name: 'Sam Volunteer', role: 'viewer' },
};
const OPERATOR = 'ops@dx.example';

/** An app's call to /api/v1 on the running service. */
async function api(baseUrl: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${baseUrl}/api/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const json = (await res.json()) as Record<string, unknown>;
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

/** Two apps connected to the workspace; one defines a dataset and loads it twice, once with a bad row. */
async function seedData(service: RunningService, baseUrl: string, workspaceId: number, workspaceKey: string) {
  const f = { database: service.database, app: service.api! };
  const apps = [await onboardApp(f, 'Canvass App'), await onboardApp(f, 'Survey App', 'ES256')];
  const tokens: string[] = [];
  for (const a of apps) {
    const installation = await connectInstallation(service.database.db, a.app.id, workspaceId);
    tokens.push(await accessToken(f, a, installation.id, workspaceKey));
  }
  const token = tokens[0]!;
  const { datasetId } = (await api(baseUrl, token, 'POST', '/datasets', {
    name: 'Volunteers',
    schema: {
      properties: [
        { name: 'voter_id', type: 'integer' },
        { name: 'first_name', type: 'string', required: true },
        { name: 'opted_in', type: 'boolean' },
      ],
      primaryKey: ['voter_id'],
    },
  })) as { datasetId: string };
  const load = async (csv: string, mode: string) => {
    const { url, jobId } = (await api(
      baseUrl,
      token,
      'POST',
      `/datasets/${datasetId}/uploadUrl?mode=${mode}`,
      {
        contentType: 'csv',
      },
    )) as { url: string; jobId: string };
    await fetch(url, { method: 'PUT', headers: { 'content-type': 'text/csv' }, body: csv });
    for (;;) {
      const job = (await api(baseUrl, token, 'GET', `/datasets/jobs/${jobId}`)) as {
        currentStatus: { status: string };
      };
      if (['Completed', 'Failed', 'Expired'].includes(job.currentStatus.status)) return jobId;
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await load('voter_id,first_name,opted_in\n1,Ann,true\n2,Bob,false\n3,Chen,true\n', 'create');
  const failedJobId = await load('voter_id,first_name,opted_in\n4,Dee,true\nfive,Eve,maybe\n', 'append');
  return { datasetId, failedJobId };
}

async function seed(service: RunningService, publicUrl: string): Promise<Seed> {
  const db = consoleDb(service.database.db);
  const { workspace, workspaceKey } = await createWorkspace(service.database.db, {
    displayName: 'Riverside Campaign',
  });
  await createWorkspace(service.database.db, { displayName: 'Friends of the Park' });
  await createWorkspace(service.database.db, { displayName: 'Hilltop Tenants Union' });
  await createOperatorWithPassword(db, CLI_ACTOR, OPERATOR, PASSWORD);
  for (const p of Object.values(PEOPLE)) {
    const inv = await inviteMember(db, CLI_ACTOR, {
      workspaceId: workspace.id,
      email: p.email,
      role: p.role,
    });
    await db
      .transaction()
      .execute((trx) => acceptInvitation(trx, inv.token, { displayName: p.name, password: PASSWORD }));
  }
  return {
    workspaceId: workspace.id,
    ...(await seedData(service, publicUrl, workspace.id, workspaceKey)),
    inviteLink: async () => {
      const inv = await inviteMember(db, CLI_ACTOR, {
        workspaceId: workspace.id,
        email: 'alex.newcomer@riverside.example',
        role: 'admin',
      });
      return invitationLink(publicUrl, inv.token);
    },
  };
}

async function signedInPage(
  browser: Browser,
  baseURL: string,
  who: Who,
  viewport: { width: number; height: number },
) {
  const context = await browser.newContext({ baseURL, viewport });
  const page = await context.newPage();
  if (who !== 'nobody') {
    await page.goto('/console/sign-in');
    await page.getByLabel('Email').fill(who === 'operator' ? OPERATOR : PEOPLE[who].email);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/console/home');
  }
  return page;
}

async function main() {
  const problem = chromiumProblem();
  if (problem !== null) throw new Error(problem);
  const dataDir = mkdtempSync(join(tmpdir(), 'dx-screenshots-'));
  const config = loadConfig({
    DATA_DIR: dataDir,
    DATABASE_URL: `sqlite:${join(dataDir, 'dx.sqlite')}`,
    API_PORT: '0',
    HOST: '127.0.0.1',
    ROLES: 'api,worker',
    WORKER_POLL_MS: '50',
    LOG_LEVEL: 'silent',
  });
  const service = await startService(config, { logger: false });
  const baseUrl = service.apiUrl ?? '';
  config.publicUrl = baseUrl;
  const browser = await launchChromium();
  try {
    const data = await seed(service, baseUrl);
    mkdirSync(OUT, { recursive: true });
    for (const shot of SHOTS)
      for (const [width, viewport] of Object.entries(VIEWPORTS)) {
        const page = await signedInPage(browser, baseUrl, shot.who, viewport);
        await shot.open(page, data);
        const file = join(OUT, `${shot.name}-${width}.png`);
        await page.screenshot({ path: file, fullPage: true });
        await page.context().close();
        console.log(`${file} (${Math.round(statSync(file).size / 1024)} kB)`);
      }
  } finally {
    await browser.close();
    await service.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

await main();
