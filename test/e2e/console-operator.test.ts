// The operator's pages in Chromium, on SQLite and PostgreSQL: the operator creates a workspace and
// invites its owner from the console (not the CLI this time); the owner accepts the link, signs in
// and reads the same Workspace ID; the Workspace Key shown once works for an app.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { consoleSuite } from './support/harness.js';
import { acceptInvitation, operator, signIn, uniqueEmail, workspaceIdOnPage } from './support/people.js';
import { callApi, connectApp, newApp, tokenFor } from './support/apps.js';

await consoleSuite('console operator pages in Chromium', (c) => {
  test('the operator creates a workspace and invites its owner from the console; the owner reads its ID', async () => {
    const op = await operator(c);
    const page = op.page;
    await page.getByRole('link', { name: 'Operator pages' }).click();
    await page.getByRole('link', { name: 'Workspaces', exact: true }).click();
    await page.getByLabel('Workspace name').fill('Eastside Tenants');
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('heading', { level: 1, name: 'Workspace created: Eastside Tenants' }).waitFor();
    const workspaceId = Number(await workspaceIdOnPage(page));
    const workspaceKey = (await page.locator('#workspace-key').innerText()).trim();
    assert.ok(workspaceId > 0 && workspaceKey.length > 20);

    const email = uniqueEmail('eastside-owner');
    await page.getByLabel("Owner's email").fill(email);
    await page.getByRole('button', { name: 'Create invitation link' }).click();
    const link = (await page.locator('#invitation-link').innerText()).trim();
    assert.ok(link.startsWith(c.url('/console/invitation?token=dxi_')), link);

    const owner = await c.newPage();
    await acceptInvitation(owner, link, 'Eve Eastside');
    await signIn(owner, email);
    await owner.getByRole('link', { name: 'Eastside Tenants' }).click();
    assert.equal(await workspaceIdOnPage(owner), String(workspaceId));

    // The key the operator saw once is the workspace's: an app connected to it gets a token.
    const app = await newApp(c, 'Eastside App');
    const token = await tokenFor(c, app, await connectApp(c, app, workspaceId), workspaceKey);
    assert.equal((await callApi(c, token, 'GET', '/datasets')).status, 200);
  });
});
