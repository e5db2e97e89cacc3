// The console in a real Chromium, on SQLite and PostgreSQL, driven as people drive it (labels,
// roles, the keyboard): the operator onboards a workspace from the CLI, its owner accepts and reads
// the Workspace ID, a viewer is offered no change and refused a forged one, and CSRF, session
// fixation and sign-out behave in a browser as they must.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { consoleSuite } from './support/harness.js';
import { startAttackerSite } from './support/attacker.js';
import {
  acceptInvitation,
  createWorkspace,
  inviteOwner,
  memberInvitedBy,
  openWorkspace,
  PASSWORD,
  sessionCookie,
  signIn,
  signOut,
  uniqueEmail,
  workspaceIdOnPage,
  workspaceWithOwner,
} from './support/people.js';

/** Puts a cookie in the page's browser as the console's own are set (host-only, Path=/console). */
async function plant(page: Page, name: string, value: string) {
  await page.context().addCookies([{ name, value, domain: '127.0.0.1', path: '/console' }]);
}

/** The status of the document a navigation started by `action` ends on. */
async function statusOfNavigation(page: Page, action: () => Promise<unknown>): Promise<number> {
  const [response] = await Promise.all([
    page.waitForResponse((r) => r.request().isNavigationRequest() && r.request().method() === 'POST'),
    action(),
  ]);
  await page.waitForLoadState();
  return response.status();
}

await consoleSuite('console in Chromium', (c) => {
  /** Whether an invitation was ever made for `email` (a refused request must not have made one). */
  const invitationsFor = async (email: string) =>
    (
      await c
        .db()
        .selectFrom('console_invitations')
        .innerJoin('console_accounts', 'console_accounts.id', 'console_invitations.account_id')
        .select('console_invitations.token_hash')
        .where('console_accounts.email', '=', email)
        .execute()
    ).length;

  test('the operator onboards a workspace from the CLI; its owner accepts, signs in and reads the Workspace ID', async () => {
    const ws = await createWorkspace(c, 'Friends of the Park');
    const email = uniqueEmail('owner');
    const link = await inviteOwner(c, ws.workspaceId, email);

    const page = await c.newPage();
    await page.goto(link);
    await page.getByRole('heading', { name: 'Accept your invitation' }).waitFor();
    assert.match(await page.locator('main').innerText(), /Friends of the Park/);
    await acceptInvitation(page, link, 'Pat Owner');
    assert.match(await page.getByRole('status').innerText(), /Your password is set/);

    await signIn(page, email.toUpperCase());
    await page.getByRole('link', { name: 'Friends of the Park' }).click();
    await page.getByRole('heading', { level: 1, name: 'Friends of the Park' }).waitFor();
    assert.equal(await workspaceIdOnPage(page), String(ws.workspaceId));
    assert.equal((await page.locator('dt:text-is("Your role") + dd').innerText()).trim(), 'Owner');
    const members = page.getByRole('table').first();
    assert.match(await members.innerText(), /Pat Owner/);
    // The key is never shown here (it is shown once, when rotated), nor a sign-in credential.
    assert.doesNotMatch(await page.content(), new RegExp(ws.workspaceKey));

    // The link was spent: opening it again says so (410), in any browser, and offers sign-in.
    const again = await c.newPage();
    const res = await again.goto(link);
    assert.equal(res?.status(), 410);
    await again.getByRole('heading', { name: 'Invitation already accepted' }).waitFor();
    await again.getByRole('link', { name: 'Sign in', exact: true }).click();
    await again.waitForURL('**/console/sign-in');
  });

  test('a viewer invited from the console is offered no form, and a forged post is refused (403)', async () => {
    const { workspaceId, owner } = await workspaceWithOwner(c, 'Riverside Campaign');
    const viewer = await memberInvitedBy(c, owner, workspaceId, 'Viewer');
    await openWorkspace(viewer.page, 'Riverside Campaign');
    assert.equal(await workspaceIdOnPage(viewer.page), String(workspaceId));
    assert.equal((await viewer.page.locator('dt:text-is("Your role") + dd').innerText()).trim(), 'Viewer');
    // Nothing to change: no control at all but the header's sign-out button (and the script's Copy
    // button beside the Workspace ID, which changes nothing).
    const main = viewer.page.getByRole('main');
    assert.equal(await main.locator('form, input, select, textarea, button:not(.copy)').count(), 0);
    assert.deepEqual(await viewer.page.getByRole('button').allInnerTexts(), ['Sign out', 'Copy']);
    // The owner's page has the form the viewer lacks (so the check above can fail).
    await owner.page.goto(`/console/workspaces/${workspaceId}`);
    await owner.page.getByRole('button', { name: 'Create invitation link' }).waitFor();

    // The viewer builds the owner's form by hand, with their own session's valid CSRF token.
    const forged = uniqueEmail('forged');
    const status = await statusOfNavigation(viewer.page, () =>
      viewer.page.evaluate(
        `(() => {
          const f = document.createElement('form');
          f.method = 'post';
          f.action = '/console/workspaces/${workspaceId}/invitations';
          const csrf = document.querySelector('input[name=_csrf]').cloneNode();
          const email = Object.assign(document.createElement('input'), { name: 'email', value: '${forged}' });
          const role = Object.assign(document.createElement('input'), { name: 'role', value: 'owner' });
          f.append(csrf, email, role);
          document.body.append(f);
          f.submit();
        })()`,
      ),
    );
    assert.equal(status, 403);
    await viewer.page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    assert.equal(await invitationsFor(forged), 0);
  });

  test('CSRF: a form posted from another origin or site, or a post without the token, changes nothing', async () => {
    const { workspaceId, owner } = await workspaceWithOwner(c, 'Hilltop Campaign');
    const attacker = await startAttackerSite();
    try {
      const action = c.url(`/console/workspaces/${workspaceId}/invitations`);
      // Same site, other origin (another port): the cookie goes along, the token is what stops it.
      const sameSite = uniqueEmail('csrf-same-site');
      const status = await statusOfNavigation(owner.page, () =>
        owner.page.goto(attacker.url('127.0.0.1', action, { email: sameSite, role: 'owner' })),
      );
      assert.equal(status, 403);
      await owner.page.getByRole('heading', { name: 'Not allowed' }).waitFor();
      // A guessed token is no better.
      const guessed = uniqueEmail('csrf-guessed');
      assert.equal(
        await statusOfNavigation(owner.page, () =>
          owner.page.goto(
            attacker.url('127.0.0.1', action, { email: guessed, role: 'owner', _csrf: 'x'.repeat(43) }),
          ),
        ),
        403,
      );
      // Another site (localhost is not 127.0.0.1): SameSite=Lax keeps the cookie home as well.
      const crossSite = uniqueEmail('csrf-cross-site');
      assert.equal(
        await statusOfNavigation(owner.page, () =>
          owner.page.goto(attacker.url('localhost', action, { email: crossSite, role: 'owner' })),
        ),
        403,
      );
      // Signing the victim out from elsewhere fails too: they are still signed in.
      assert.equal(
        await statusOfNavigation(owner.page, () =>
          owner.page.goto(attacker.url('127.0.0.1', c.url('/console/sign-out'), {})),
        ),
        403,
      );
      // A script-less request with the session cookie but no token (the console's own origin).
      const noToken = uniqueEmail('csrf-no-token');
      const direct = await owner.page.request.post(action, { form: { email: noToken, role: 'owner' } });
      assert.equal(direct.status(), 403);

      for (const email of [sameSite, guessed, crossSite, noToken])
        assert.equal(await invitationsFor(email), 0, email);
      const home = await owner.page.goto('/console/home');
      assert.equal(home?.status(), 200);
      assert.equal(new URL(owner.page.url()).pathname, '/console/home');
      // The same form from the console's own page does go through (the refusals above can fail).
      await owner.page.goto(`/console/workspaces/${workspaceId}`);
      await owner.page.getByLabel('Email').fill(sameSite);
      await owner.page.getByRole('button', { name: 'Create invitation link' }).click();
      await owner.page.getByRole('heading', { name: `Invitation link for ${sameSite}` }).waitFor();
      assert.equal(await invitationsFor(sameSite), 1);
    } finally {
      await attacker.close();
    }
  });

  test('session fixation: a cookie planted before sign-in never becomes the signed-in session', async () => {
    const { owner } = await workspaceWithOwner(c, 'Lakeside Campaign');
    // 1. A made-up session id, planted in the victim's browser.
    const victim = await c.newPage();
    await plant(victim, 'dx_console', 'dxs_planted-by-attacker');
    await signIn(victim, owner.email);
    const after = await sessionCookie(victim);
    assert.ok(after !== undefined && after !== 'dxs_planted-by-attacker', after);
    const planted = await c.newPage();
    await plant(planted, 'dx_console', 'dxs_planted-by-attacker');
    await planted.goto('/console/home');
    assert.equal(new URL(planted.url()).pathname, '/console/sign-in');

    // 2. The attacker's own pre-session cookie (what the sign-in form is bound to before anyone
    // signs in), planted with its value as a session id too: the sign-in drops both.
    const attacker = await c.newPage();
    await attacker.goto('/console/sign-in');
    const pre = (await attacker.context().cookies()).find((k) => k.name === 'dx_console_pre')?.value;
    assert.ok(pre !== undefined);
    const victim2 = await c.newPage();
    await plant(victim2, 'dx_console_pre', pre);
    await plant(victim2, 'dx_console', pre);
    await signIn(victim2, owner.email);
    const own = await sessionCookie(victim2);
    assert.ok(own !== undefined && own !== pre && /^dxs_/.test(own), own);
    assert.equal(
      (await victim2.context().cookies()).find((k) => k.name === 'dx_console_pre'),
      undefined,
    );
    // What the attacker holds opens nothing.
    await plant(attacker, 'dx_console', pre);
    await attacker.goto('/console/home');
    assert.equal(new URL(attacker.url()).pathname, '/console/sign-in');
    // The victim's own session works.
    await victim2.goto('/console/home');
    assert.equal(new URL(victim2.url()).pathname, '/console/home');
  });

  test('sign-out ends the session: the old cookie no longer opens the console', async () => {
    const { owner } = await workspaceWithOwner(c, 'Valley Campaign');
    const before = (await sessionCookie(owner.page))!;
    assert.match(before, /^dxs_/);
    await owner.page.goto('/console/home');
    await signOut(owner.page);
    assert.equal(await sessionCookie(owner.page), undefined);
    await owner.page.goto('/console/home');
    assert.equal(new URL(owner.page.url()).pathname, '/console/sign-in');
    // A copy of the old cookie, replayed from another browser, is refused as well.
    const replay = await c.newPage();
    await plant(replay, 'dx_console', before);
    const res = await replay.goto('/console/home');
    assert.equal(new URL(replay.url()).pathname, '/console/sign-in');
    assert.equal(res?.status(), 200);
    // And the person can sign in again.
    await signIn(owner.page, owner.email, PASSWORD);
  });
});
