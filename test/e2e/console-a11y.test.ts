// The console's pages in Chromium at a phone's width (375 px) and with the keyboard, on SQLite and
// PostgreSQL: every page a person can reach fits without sideways scrolling and passes the page
// checks (labels, headings, table headers; support/a11y.ts), and does not scroll at 320 px either; the skip link is the first Tab stop;
// every Tab stop shows its focus.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Page } from 'playwright-core';
import { consoleSuite, DESKTOP, PHONE } from './support/harness.js';
import { crawl, focused, pageProblems, tabStops } from './support/a11y.js';
import { connectApp, defineDataset, loadCsv, newApp, tokenFor } from './support/apps.js';
import {
  acceptInvitation,
  createWorkspace,
  inviteFromConsole,
  inviteOwner,
  memberInvitedBy,
  operator,
  PASSWORD,
  workspaceWithOwner,
  signIn,
  uniqueEmail,
} from './support/people.js';

// The worst case for a narrow screen: long unbroken names and addresses.
const LONG_NAME = 'Supercalifragilistic-County-Campaign-Headquarters-2026';
/** WCAG's reflow width: 1280 px at 400 % zoom. */
const REFLOW = { width: 320, height: 740 };
const longEmail = () => uniqueEmail('data.manager.for.the.riverside.county.campaign');

await consoleSuite('console pages in Chromium: phone width and keyboard', (c) => {
  test('every page a person can reach fits 375 px (and 320) and has labels, headings and table headers', async () => {
    const problems: string[] = [];
    const visited: string[] = [];
    const check = async (page: Page, what: string) => {
      visited.push(what);
      const where = `${what} (${new URL(page.url()).pathname})`;
      for (const p of await pageProblems(page)) problems.push(`${where}: ${p}`);
      // WCAG 1.4.10 (reflow) asks for 320 CSS px: the same page, narrower, must not scroll either.
      await page.setViewportSize(REFLOW);
      for (const p of await pageProblems(page))
        if (p.startsWith('scrolls sideways')) problems.push(`${where} at 320 px: ${p}`);
      await page.setViewportSize(PHONE);
    };

    // Someone not signed in: sign-in (plain, after a failure), an unknown page, a spent link.
    const anon = await c.newPage(PHONE);
    await anon.goto('/console/sign-in');
    await check(anon, 'sign-in');
    await anon.getByLabel('Email').fill(longEmail());
    await anon.getByLabel('Password').fill('not the right password');
    await anon.getByRole('button', { name: 'Sign in' }).click();
    await anon.getByRole('alert').waitFor();
    await check(anon, 'sign-in refused');
    await anon.goto('/console/no-such-page');
    await check(anon, 'not found');

    // The owner's way in, with a long workspace name and a long address.
    const ws = await createWorkspace(c, LONG_NAME);
    const ownerEmail = longEmail();
    const link = await inviteOwner(c, ws.workspaceId, ownerEmail);
    const owner = await c.newPage(PHONE);
    await owner.goto(link);
    await check(owner, 'accept invitation');
    await owner.getByLabel('Your name').fill('Olivia Owner-Longname');
    await owner.getByLabel('Choose a password').fill(PASSWORD);
    await owner.getByLabel('Type the password again').fill(`${PASSWORD}!`);
    await owner.getByRole('button', { name: 'Set password' }).click();
    await owner.getByRole('alert').waitFor();
    await check(owner, 'accept invitation, passwords differ');
    await acceptInvitation(owner, link, 'Olivia Owner-Longname');
    await check(owner, 'sign-in after accepting');
    await owner.goto(link);
    await check(owner, 'spent invitation link');
    await signIn(owner, ownerEmail);
    await check(owner, 'home (owner)');
    await owner.goto(`/console/workspaces/${ws.workspaceId}`);
    await check(owner, 'workspace (owner)');
    await inviteFromConsole(owner, longEmail(), 'Admin');
    await check(owner, 'invitation link created');

    // A viewer, and the refusal page a stale form gets.
    const viewer = await memberInvitedBy(
      c,
      { page: owner, email: ownerEmail, name: 'Olivia' },
      ws.workspaceId,
      'Viewer',
      PHONE,
    );
    await check(viewer.page, 'home (viewer)');
    await viewer.page.goto(`/console/workspaces/${ws.workspaceId}`);
    await check(viewer.page, 'workspace (viewer)');
    await viewer.page.evaluate(`document.querySelector('input[name=_csrf]').value = 'expired'`);
    await viewer.page.getByRole('button', { name: 'Sign out' }).click();
    await viewer.page.getByRole('heading', { name: 'Not allowed' }).waitFor();
    await check(viewer.page, 'refused form (403)');

    // The operator: every workspace, a workspace's activity, and an invitation for someone who
    // already has an account (the owner, to a second workspace).
    const op = await operator(c, PHONE);
    await check(op.page, 'home (operator)');
    await op.page.goto(`/console/workspaces/${ws.workspaceId}`);
    await check(op.page, 'workspace with activity (operator)');
    const second = await createWorkspace(c, 'Second Campaign');
    const existing = await c.newPage(PHONE);
    await existing.goto(await inviteOwner(c, second.workspaceId, ownerEmail));
    await check(existing, 'accept invitation, existing account');

    assert.ok(visited.length >= 16, String(visited.length));
    assert.deepEqual(problems, []);
  });

  test('the skip link is the first Tab stop, shows its focus, and leads into the main content', async () => {
    for (const viewport of [PHONE, DESKTOP]) {
      const page = await c.newPage(viewport);
      await page.goto('/console/sign-in');
      await page.keyboard.press('Tab');
      const first = await focused(page);
      assert.ok(first !== null);
      assert.equal(first.text, 'Skip to content');
      assert.equal(first.href, '#main');
      assert.equal(first.inView, true, 'the focused skip link is on screen');
      assert.equal(first.outlineStyle, 'solid');
      assert.ok(first.outlineWidth >= 2, String(first.outlineWidth));
      await page.keyboard.press('Enter');
      // The fragment navigation completes after the key press returns: wait for it (a timeout
      // fails the test just as the assertion would), then move on from the new focus point.
      await page.waitForFunction('location.hash === "#main"', undefined, { timeout: 5000 });
      assert.equal(new URL(page.url()).hash, '#main');
      await page.keyboard.press('Tab');
      assert.equal(
        await page.evaluate('document.querySelector("main").contains(document.activeElement)'),
        true,
      );
      assert.equal(await page.evaluate('document.activeElement.id'), 'email');
    }
  });

  test('every Tab stop on the pages shows a visible focus outline, in reading order', async () => {
    const ws = await createWorkspace(c, 'Keyboard Campaign');
    const email = uniqueEmail('keyboard');
    const page = await c.newPage(PHONE);
    await acceptInvitation(page, await inviteOwner(c, ws.workspaceId, email), 'Kim Keys');
    await signIn(page, email);
    for (const path of [
      '/console/sign-out-not-a-page',
      '/console/home',
      `/console/workspaces/${ws.workspaceId}`,
    ]) {
      await page.goto(path);
      const stops = await tabStops(page);
      assert.ok(stops.length >= 3, `${path}: ${JSON.stringify(stops)}`);
      assert.equal(stops[0]!.text, 'Skip to content', path);
      for (const s of stops)
        assert.ok(
          s.outlineStyle === 'solid' && s.outlineWidth >= 2,
          `${path}: no visible focus on ${s.tag} "${s.text}": ${s.outlineStyle} ${s.outlineWidth}px`,
        );
    }
    // The workspace page's invite form is reached in the order it reads.
    const names = (await tabStops(page)).map((s) => `${s.tag}:${s.text}`);
    const order = [
      'a:Skip to content',
      'a:Dataset Exchange',
      'button:Sign out',
      'button:Create invitation link',
    ];
    let at = -1;
    for (const want of order) {
      const i = names.indexOf(want);
      assert.ok(i > at, `${want} after the previous stop in ${names.join(' | ')}`);
      at = i;
    }
    await page.goto(`/console/workspaces/${ws.workspaceId}`);
    await page.getByLabel('Email').focus();
    assert.equal((await focused(page))?.outlineStyle, 'solid');
  });

  test('every console page linked from home, followed as the operator, an owner and a viewer, passes the page checks at 375 px', async () => {
    // Something on every page there is today: members, a connected app, a dataset with a load
    // that rejected a row. Pages added later are reached as soon as something links to them.
    const { workspaceId, workspaceKey, owner } = await workspaceWithOwner(c, LONG_NAME, PHONE);
    const viewer = await memberInvitedBy(c, owner, workspaceId, 'Viewer', PHONE);
    const app = await newApp(c, 'Canvass App with a rather long name for a phone screen');
    const token = await tokenFor(c, app, await connectApp(c, app, workspaceId), workspaceKey);
    const dataset = await defineDataset(
      c,
      token,
      'Volunteers',
      [
        { name: 'id', type: 'integer' },
        { name: 'email_address_of_the_volunteer', type: 'string' },
      ],
      ['id'],
    );
    const long = `${'x'.repeat(80)}@example.org`;
    await loadCsv(c, token, dataset, `id,email_address_of_the_volunteer\n1,${long}\nx,bad\n`, 1);
    const op = await operator(c, PHONE);

    const problems: string[] = [];
    const counts: Record<string, number> = {};
    for (const [who, page] of [
      ['operator', op.page],
      ['owner', owner.page],
      ['viewer', viewer.page],
    ] as const) {
      const pages = await crawl(page, '/console/home');
      counts[who] = pages.length;
      for (const p of pages) {
        if (p.status !== 200) problems.push(`${who} ${p.url}: a link leads to ${p.status}`);
        for (const problem of p.problems) problems.push(`${who} ${p.url}: ${problem}`);
      }
    }
    assert.ok(counts.owner! >= 2 && counts.viewer! >= 2 && counts.operator! >= 2, JSON.stringify(counts));
    assert.deepEqual(problems, []);
  });

  test('the navigation bar and the breadcrumb trail lead from a load up to the console, at desktop and phone widths', async () => {
    for (const viewport of [DESKTOP, PHONE]) {
      const { workspaceId, workspaceKey, owner } = await workspaceWithOwner(
        c,
        'Riverside Campaign',
        viewport,
      );
      const app = await newApp(c, 'Canvass App');
      const token = await tokenFor(c, app, await connectApp(c, app, workspaceId), workspaceKey);
      const dataset = await defineDataset(c, token, 'Volunteers', [{ name: 'id', type: 'integer' }], ['id']);
      const { jobId } = await loadCsv(c, token, dataset, 'id\n1\n2\n');
      const page = owner.page;
      const trail = page.getByRole('navigation', { name: 'Breadcrumb' });
      const crumbs = async () => (await trail.getByRole('listitem').allTextContents()).map((t) => t.trim());

      await page.goto(`/console/workspaces/${workspaceId}/jobs/${jobId}`);
      assert.deepEqual(await crumbs(), [
        'Your workspaces',
        'Riverside Campaign',
        'Datasets',
        'Volunteers',
        'Load of Volunteers',
      ]);
      await trail.getByRole('link', { name: 'Volunteers' }).click();
      await page.getByRole('heading', { level: 1, name: 'Volunteers' }).waitFor();
      await trail.getByRole('link', { name: 'Datasets' }).click();
      await page.getByRole('heading', { level: 1, name: 'Datasets of Riverside Campaign' }).waitFor();
      await trail.getByRole('link', { name: 'Riverside Campaign' }).click();
      await page.getByRole('heading', { level: 1, name: 'Riverside Campaign' }).waitFor();
      assert.equal(new URL(page.url()).pathname, `/console/workspaces/${workspaceId}`);

      // The sections, on every page: an owner has no operator's section.
      const sections = page.getByRole('navigation', { name: 'Console' });
      assert.deepEqual(
        (await sections.getByRole('link').allTextContents()).map((t) => t.trim()),
        ['Your workspaces', 'Your account'],
      );
      await sections.getByRole('link', { name: 'Your account' }).click();
      await page.getByRole('heading', { level: 1, name: 'Your account' }).waitFor();
      await sections.getByRole('link', { name: 'Your workspaces' }).click();
      assert.equal(new URL(page.url()).pathname, '/console/home');

      // The operator's bar has the operator's section, and its pages their trail.
      const op = await operator(c, viewport);
      const opSections = op.page.getByRole('navigation', { name: 'Console' });
      await opSections.getByRole('link', { name: 'Operator' }).click();
      await op.page.goto('/console/operator/apps');
      const opTrail = op.page.getByRole('navigation', { name: 'Breadcrumb' });
      assert.deepEqual(
        (await opTrail.getByRole('listitem').allTextContents()).map((t) => t.trim()),
        ['Operator', 'Apps'],
      );
      await opTrail.getByRole('link', { name: 'Operator' }).click();
      assert.equal(new URL(op.page.url()).pathname, '/console/operator');
    }
  });

  test('at 1280 px every table fits its column, the audit logs included, as the operator and an owner', async () => {
    const { workspaceId, workspaceKey, owner } = await workspaceWithOwner(c, LONG_NAME, DESKTOP);
    await memberInvitedBy(c, owner, workspaceId, 'Viewer', DESKTOP);
    const app = await newApp(c, 'Canvass App with a rather long name for a table');
    const token = await tokenFor(c, app, await connectApp(c, app, workspaceId), workspaceKey);
    const dataset = await defineDataset(c, token, 'Volunteers', [{ name: 'id', type: 'integer' }], ['id']);
    await loadCsv(c, token, dataset, 'id\n1\nx\n', 1);
    const op = await operator(c, DESKTOP);
    const problems: string[] = [];
    let tables = 0;
    for (const [who, page] of [
      ['operator', op.page],
      ['owner', owner.page],
    ] as const) {
      for (const p of await crawl(page, '/console/home')) {
        for (const problem of p.problems) problems.push(`${who} ${p.url}: ${problem}`);
      }
      tables += await page.evaluate<number>('document.querySelectorAll(".table-wrap").length');
    }
    await op.page.goto('/console/audit');
    tables += await op.page.evaluate<number>('document.querySelectorAll(".table-wrap").length');
    for (const problem of await pageProblems(op.page)) problems.push(`operator's audit log: ${problem}`);
    assert.ok(tables > 0, 'tables were looked at');
    assert.deepEqual(problems, []);
  });
});
