// The workspace settings pages in Chromium, on SQLite and PostgreSQL, driven as the owner drives
// them, each checked from the app's side through the API: connecting an app by its App ID,
// rotating the Workspace Key (the app's old token stops, the new key works), disconnecting an app
// (its token stops).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { consoleSuite } from './support/harness.js';
import { openWorkspace, workspaceWithOwner } from './support/people.js';
import { callApi, newApp, tokenFor, type TestPartner } from './support/apps.js';
import type { ConsoleE2E } from './support/harness.js';

let counter = 0;

/** The app's own view of where it is installed (its JWT, not a token). */
async function installationsOf(c: ConsoleE2E, app: TestPartner) {
  const res = await fetch(c.url('/api/v1/apps/me/installations'), {
    headers: { authorization: `Bearer ${await app.jwt()}` },
  });
  assert.equal(res.status, 200);
  return ((await res.json()) as { data: { workspaceId: number; installationId: number }[] }).data;
}

/** The owner connects `app` on the Connected apps page, by its App ID. */
async function connectInConsole(page: Page, workspaceName: string, app: TestPartner) {
  await openWorkspace(page, workspaceName);
  await page.getByRole('link', { name: 'Connected apps' }).click();
  await page.getByLabel('App ID').fill(app.app.id);
  await page.getByRole('button', { name: 'Connect the app' }).click();
  await page.getByRole('status').filter({ hasText: 'connected' }).waitFor();
}

await consoleSuite('console workspace settings in Chromium', (c) => {
  /** A workspace with its owner, an app connected from the console and a token of that app. */
  async function connected() {
    const name = `Hilltop Campaign ${++counter}`;
    const { workspaceId, workspaceKey, owner } = await workspaceWithOwner(c, name);
    const app = await newApp(c, `Canvass App ${counter}`);
    await connectInConsole(owner.page, name, app);
    const installation = (await installationsOf(c, app)).find((i) => i.workspaceId === workspaceId);
    assert.ok(installation !== undefined, 'the app lists its new installation');
    const token = await tokenFor(c, app, installation.installationId, workspaceKey);
    return {
      name,
      workspaceId,
      workspaceKey,
      owner,
      app,
      installationId: installation.installationId,
      token,
    };
  }

  test('the owner connects an app by its App ID; the app sees the workspace and gets a working token', async () => {
    const w = await connected();
    const table = w.owner.page.getByRole('table');
    assert.match(await table.innerText(), new RegExp(w.app.app.name));
    assert.match(await table.innerText(), new RegExp(w.app.app.id));
    assert.equal((await callApi(c, w.token, 'GET', '/auth/me')).status, 200);
    assert.equal((await callApi(c, w.token, 'GET', '/datasets')).status, 200);
  });

  test("the owner rotates the key: the app's old token stops working, the new key works", async () => {
    const w = await connected();
    const page = w.owner.page;
    await openWorkspace(page, w.name);
    await page.getByRole('link', { name: 'Workspace Key' }).click();
    // What rotation does is said before it happens.
    const effects = await page.locator('#rotation-effects').innerText();
    assert.match(effects, /stops working at once/);
    assert.match(await page.getByRole('main').innerText(), new RegExp(w.app.app.name));
    await page.getByLabel("Type the workspace's name").fill(w.name);
    await page.getByRole('button', { name: 'Rotate the Workspace Key now' }).click();
    await page.getByRole('heading', { level: 1, name: `New Workspace Key of ${w.name}` }).waitFor();
    const newKey = (await page.locator('#workspace-key').innerText()).trim();
    assert.ok(newKey.length > 20 && newKey !== w.workspaceKey);
    // Shown once: the key's page, opened again, does not show it. (A reload would send the form
    // again, which rotates again: documented, and safe.)
    await page.goto(`/console/workspaces/${w.workspaceId}/key`);
    assert.doesNotMatch(await page.content(), new RegExp(newKey));

    assert.equal((await callApi(c, w.token, 'GET', '/datasets')).status, 401);
    await assert.rejects(tokenFor(c, w.app, w.installationId, w.workspaceKey), /clientToken failed: 4\d\d/);
    const fresh = await tokenFor(c, w.app, w.installationId, newKey);
    assert.equal((await callApi(c, fresh, 'GET', '/datasets')).status, 200);
  });

  test("the owner disconnects an app after confirming; the app's token stops working", async () => {
    const w = await connected();
    const page = w.owner.page;
    await page.getByRole('link', { name: `Disconnect ${w.app.app.name}` }).click();
    await page
      .getByRole('heading', { level: 1, name: `Disconnect ${w.app.app.name} from ${w.name}?` })
      .waitFor();
    // Nothing happened yet: the app still works until the owner confirms.
    assert.equal((await callApi(c, w.token, 'GET', '/datasets')).status, 200);
    await page.getByRole('button', { name: `Disconnect ${w.app.app.name}` }).click();
    await page.getByRole('status').waitFor();
    assert.equal((await callApi(c, w.token, 'GET', '/datasets')).status, 401);
    assert.ok(!(await installationsOf(c, w.app)).some((i) => i.workspaceId === w.workspaceId));
  });
});
