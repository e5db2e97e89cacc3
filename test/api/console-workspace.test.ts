// A workspace's own settings in the console, through HTTP on SQLite and PostgreSQL: rotating the
// Workspace Key (shown once; the apps' old tokens stop), connecting and disconnecting apps by app
// ID, members' roles and removal with the last owner kept, the audit log pages, and a viewer who
// is offered nothing and refused everything.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import {
  ConsoleBrowser,
  csrfOf,
  signedInMember,
  TEST_PASSWORD,
  unescapeHtml,
} from '../support/console-browser.js';
import { accessToken, onboardApp, type TestPartner } from '../support/onboarding.js';
import { createWorkspace } from '../../src/domain/identity/workspaces.js';
import { connectInstallation } from '../../src/domain/identity/installations.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { audit, CLI_ACTOR } from '../../src/domain/console/audit.js';
import { invitationLink, inviteMember, inviteOperator } from '../../src/domain/console/people.js';
import type { ConsoleRole } from '../../src/domain/console/roles.js';
import { AUDIT_PAGE_SIZE } from '../../src/http/routes/console/audit-log.js';

const PASSWORD = TEST_PASSWORD;
let counter = 0;

/** The key page's rotation form as the browser sends it: its CSRF token, the key version shown, and
 * the workspace's name typed as the page asks. */
function keyForm(page: string): Record<string, string> {
  const keyVersion = /name="keyVersion" value="(\d+)"/.exec(page)?.[1];
  assert.ok(keyVersion !== undefined, 'the rotation form carries the key version');
  const name = /Type the workspace's name, <strong>([^<]*)<\/strong>/.exec(page)?.[1];
  assert.ok(name !== undefined, 'the rotation form asks for the name');
  return { _csrf: csrfOf(page), keyVersion, confirmName: unescapeHtml(name) };
}

await forEachDatabase('web console: workspace settings', (target) => {
  let t: Fixture;
  before(async () => {
    t = await startFixture(target, { ROLES: 'api' });
  });
  after(() => t.close());

  const db = () => consoleDb(t.database.db);
  const browser = () => new ConsoleBrowser(() => t.app);
  const email = (who: string) => `${who}.${++counter}@example.org`;
  const pathOf = (link: string) => new URL(link).pathname + new URL(link).search;

  async function workspace(name = `Campaign ${++counter}`) {
    const { workspace: w, workspaceKey } = await createWorkspace(t.database.db, { displayName: name });
    return { wsId: w.id, workspaceKey };
  }

  /** A member who accepted an invitation and is signed in. */
  async function member(workspaceId: number, role: ConsoleRole = 'owner') {
    const address = email(role);
    const b = await signedInMember(t, workspaceId, role, address);
    const accountId = (
      await db()
        .selectFrom('console_accounts')
        .select('id')
        .where('email', '=', address)
        .executeTakeFirstOrThrow()
    ).id;
    return { b, address, accountId };
  }

  async function operator() {
    const address = email('operator');
    const inv = await inviteOperator(db(), CLI_ACTOR, address);
    const b = browser();
    assert.equal(
      (await b.accept(invitationLink(t.config.publicUrl, inv.token), 'Op', PASSWORD)).statusCode,
      303,
    );
    assert.equal((await b.signIn(address, PASSWORD)).statusCode, 303);
    return { b, address };
  }

  const me = (token: string) =>
    t.app.inject({ url: '/api/v1/auth/me', headers: { authorization: `Bearer ${token}` } });

  async function appInstallations(
    partner: TestPartner,
  ): Promise<{ workspaceId: number; installationId: number }[]> {
    const res = await t.app.inject({
      url: '/api/v1/apps/me/installations',
      headers: { authorization: `Bearer ${await partner.jwt()}` },
    });
    assert.equal(res.statusCode, 200);
    return res.json<{ data: { workspaceId: number; installationId: number }[] }>().data;
  }

  async function auditActions(workspaceId: number) {
    return db()
      .selectFrom('console_audit')
      .select(['action', 'actor', 'detail'])
      .where('workspace_id', '=', workspaceId)
      .orderBy('id')
      .execute();
  }

  /** The workspace's audit rows of the settings actions (none of the sign-in and invitation ones). */
  async function settingsActions(workspaceId: number) {
    const settings = [
      'workspace_key.rotated',
      'app.connected',
      'app.disconnected',
      'member.role_changed',
      'member.removed',
    ];
    return (await auditActions(workspaceId)).map((r) => r.action).filter((a) => settings.includes(a));
  }

  test('rotating the key: said before, shown once; the old token gets 401 and the new key works', async () => {
    const partner = await onboardApp(t, `Rotator ${++counter}`);
    const { wsId, workspaceKey: oldKey } = await workspace();
    const installationId = (await connectInstallation(t.database.db, partner.app.id, wsId)).id;
    const oldToken = await accessToken(t, partner, installationId, oldKey);
    assert.equal((await me(oldToken)).statusCode, 200);

    const owner = await member(wsId);
    const home = await owner.b.get(`/console/workspaces/${wsId}`);
    assert.match(home.body, new RegExp(`href="/console/workspaces/${wsId}/key"`));
    const page = await owner.b.get(`/console/workspaces/${wsId}/key`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /What rotating the key does/);
    assert.match(page.body, /Every access token that apps got with the old key stops working/);
    assert.match(page.body, /must be given the new key/);
    assert.match(page.body, new RegExp(`<li>${partner.app.name}</li>`));
    assert.match(page.body, new RegExp(`<form method="post" action="/console/workspaces/${wsId}/key">`));

    // Confirmed by typing the workspace's name, as deleting a dataset is: another name rotates nothing.
    const mistyped = await owner.b.post(`/console/workspaces/${wsId}/key`, {
      ...keyForm(page.body),
      confirmName: 'not the name',
    });
    assert.equal(mistyped.statusCode, 400);
    assert.match(mistyped.body, /Nothing was rotated: type the workspace&#39;s name/);
    assert.equal((await me(oldToken)).statusCode, 200, 'the old token still works');

    const rotated = await owner.b.post(`/console/workspaces/${wsId}/key`, keyForm(page.body));
    assert.equal(rotated.statusCode, 200);
    assert.equal(rotated.headers['cache-control'], 'no-store');
    const newKey = /<code class="secret" id="workspace-key">(wsk_[^<]+)<\/code>/.exec(rotated.body)?.[1];
    assert.ok(newKey !== undefined, rotated.body);
    assert.notEqual(newKey, oldKey);
    assert.match(rotated.body, /it will not be shown again/);

    // The app's old token stops at once; the old key mints nothing; the new one does.
    const refused = await me(oldToken);
    assert.equal(refused.statusCode, 401);
    await assert.rejects(accessToken(t, partner, installationId, oldKey), /403/);
    assert.equal((await me(await accessToken(t, partner, installationId, newKey))).statusCode, 200);

    // Shown once: no page shows it again; the log records the rotation, not the key.
    for (const url of [`/console/workspaces/${wsId}`, `/console/workspaces/${wsId}/key`])
      assert.ok(!(await owner.b.get(url)).body.includes(newKey));
    const rows = await auditActions(wsId);
    const row = rows.find((r) => r.action === 'workspace_key.rotated');
    assert.deepEqual(row, { action: 'workspace_key.rotated', actor: owner.address, detail: 'key version 2' });
    assert.ok(rows.every((r) => !(r.detail ?? '').includes('wsk_')));
  });

  test('a rotation form sent twice (a reloaded page) rotates once; the key shown first stays the key', async () => {
    const partner = await onboardApp(t, `Reloader ${++counter}`);
    const { wsId } = await workspace();
    const installationId = (await connectInstallation(t.database.db, partner.app.id, wsId)).id;
    const owner = await member(wsId);
    const url = `/console/workspaces/${wsId}/key`;
    const form = keyForm((await owner.b.get(url)).body);
    const first = await owner.b.post(url, form);
    assert.equal(first.statusCode, 200);
    const key = /id="workspace-key">(wsk_[^<]+)</.exec(first.body)?.[1];
    assert.ok(key !== undefined, first.body);

    const again = await owner.b.post(url, form);
    assert.equal(again.statusCode, 409);
    assert.equal(again.headers['cache-control'], 'no-store');
    assert.match(
      again.body,
      /role="alert" id="form-error">Nothing was rotated: the key has been rotated since this form was shown/,
    );
    assert.doesNotMatch(again.body, /id="workspace-key"/);
    // The page offers the form again, for the key as it is now.
    assert.equal(keyForm(again.body).keyVersion, '2');
    assert.equal((await me(await accessToken(t, partner, installationId, key))).statusCode, 200);
    const rotations = (await auditActions(wsId)).filter((r) => r.action === 'workspace_key.rotated');
    assert.equal(rotations.length, 1);

    // A form without the version changes nothing either.
    const incomplete = await owner.b.post(url, { _csrf: form._csrf as string });
    assert.equal(incomplete.statusCode, 400);
    assert.match(incomplete.body, /Nothing was rotated: the form did not say which key to rotate/);
    assert.equal((await me(await accessToken(t, partner, installationId, key))).statusCode, 200);
  });

  test('only owners rotate the key: an admin reads what it does, is offered no form, and gets 403', async () => {
    const { wsId } = await workspace();
    const admin = await member(wsId, 'admin');
    const page = await admin.b.get(`/console/workspaces/${wsId}/key`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /What rotating the key does/);
    assert.doesNotMatch(page.body, /action="\/console\/workspaces\/\d+\/key"/);
    assert.match(page.body, /Only an owner/);
    const before = await db()
      .selectFrom('workspaces')
      .select('key_hash')
      .where('id', '=', wsId)
      .executeTakeFirstOrThrow();
    const refused = await admin.b.post(`/console/workspaces/${wsId}/key`, { _csrf: csrfOf(page.body) });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /an owner can/);
    const after = await db()
      .selectFrom('workspaces')
      .select('key_hash')
      .where('id', '=', wsId)
      .executeTakeFirstOrThrow();
    assert.equal(after.key_hash, before.key_hash);
  });

  test('the operator acts as an owner: rotates any key and reads every audit log', async () => {
    const { wsId } = await workspace();
    const op = await operator();
    const page = await op.b.get(`/console/workspaces/${wsId}/key`);
    const rotated = await op.b.post(`/console/workspaces/${wsId}/key`, keyForm(page.body));
    assert.equal(rotated.statusCode, 200);
    assert.match(rotated.body, /id="workspace-key">wsk_/);
    const log = await op.b.get(`/console/workspaces/${wsId}/audit`);
    assert.equal(log.statusCode, 200);
    assert.match(log.body, /workspace_key\.rotated/);
    assert.match(log.body, /Rotated the Workspace Key/); // in plain words, beside the name
    const all = await op.b.get('/console/audit');
    assert.equal(all.statusCode, 200);
    assert.match(all.body, /Audit log of the whole service/);
    assert.match(all.body, new RegExp(`<a href="/console/workspaces/${wsId}">${wsId}</a>`));
    assert.match((await op.b.get('/console/home')).body, /href="\/console\/audit"/);

    // An operator who is also a viewer of a workspace keeps an operator's powers there.
    const other = await workspace();
    const account = await db()
      .selectFrom('console_accounts')
      .select('id')
      .where('email', '=', op.address)
      .executeTakeFirstOrThrow();
    await db()
      .insertInto('console_memberships')
      .values({
        account_id: account.id,
        workspace_id: other.wsId,
        role: 'viewer',
        created_at: '2026-01-01 00:00:00',
      })
      .execute();
    assert.match(
      (await op.b.get(`/console/workspaces/${other.wsId}`)).body,
      /<dd id="your-role">Operator<\/dd>/,
    );
    const keyPage = await op.b.get(`/console/workspaces/${other.wsId}/key`);
    const again = await op.b.post(`/console/workspaces/${other.wsId}/key`, keyForm(keyPage.body));
    assert.equal(again.statusCode, 200, again.body);
  });

  test('an owner renames the workspace; the API says the new name at once; others are refused', async () => {
    const { wsId, workspaceKey } = await workspace('Old Name Campaign');
    const owner = await member(wsId, 'owner');
    const admin = await member(wsId, 'admin');
    const viewer = await member(wsId, 'viewer');
    const partner = await onboardApp(t, `Renamed-workspace app ${++counter}`, 'ES256');
    const installation = await connectInstallation(t.database.db, partner.app.id, wsId);
    const token = await accessToken(t, partner, installation.id, workspaceKey);
    const workspaceName = async () =>
      (await me(token)).json<{ workspace: { displayName: string } }>().workspace.displayName;
    assert.equal(await workspaceName(), 'Old Name Campaign');

    const page = await owner.b.get(`/console/workspaces/${wsId}`);
    assert.match(page.body, /<label for="workspace-name">Workspace name<\/label>/);
    const renamed = await owner.b.post(`/console/workspaces/${wsId}/name`, {
      _csrf: csrfOf(page.body),
      name: '  Riverside Campaign 2026 ',
    });
    assert.equal(renamed.statusCode, 303);
    assert.match(
      (await owner.b.get(`/console/workspaces/${wsId}`)).body,
      /<h1>Riverside Campaign 2026<\/h1>/,
    );
    assert.equal(
      await workspaceName(),
      'Riverside Campaign 2026',
      'the credential cache let go of the old name',
    );
    const rows = (await auditActions(wsId)).filter((r) => r.action === 'workspace.renamed');
    assert.deepEqual(
      rows.map((r) => r.detail),
      ['Old Name Campaign → Riverside Campaign 2026'],
    );

    // A blank name is a 400 page; an admin and a viewer are offered no form and refused (403).
    assert.equal(
      (await owner.b.post(`/console/workspaces/${wsId}/name`, { _csrf: csrfOf(page.body), name: ' ' }))
        .statusCode,
      400,
    );
    for (const other of [admin, viewer]) {
      const theirs = await other.b.get(`/console/workspaces/${wsId}`);
      assert.doesNotMatch(theirs.body, /workspace-name/);
      const refused = await other.b.post(`/console/workspaces/${wsId}/name`, {
        _csrf: csrfOf(theirs.body),
        name: 'Taken Over',
      });
      assert.equal(refused.statusCode, 403);
    }
    assert.equal(await workspaceName(), 'Riverside Campaign 2026');
  });

  test('connect an app by its ID; the app then lists the installation; disconnect after a confirmation', async () => {
    const partner = await onboardApp(t, `Connector ${++counter}`);
    const { wsId, workspaceKey } = await workspace();
    const owner = await member(wsId);
    const appsUrl = `/console/workspaces/${wsId}/apps`;
    const empty = await owner.b.get(appsUrl);
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /No app is connected to this workspace yet/);
    assert.match(empty.body, /<label for="appId">App ID<\/label>/);

    const connected = await owner.b.submit(appsUrl, appsUrl, { appId: ` ${partner.app.id} ` });
    assert.equal(connected.statusCode, 303);
    assert.equal(connected.headers.location, `${appsUrl}?done=connected`);
    const list = await owner.b.get(connected.headers.location);
    assert.match(list.body, /The app is connected/);
    assert.match(list.body, new RegExp(`<td>${partner.app.name}<br />`));
    assert.match(list.body, new RegExp(`<code[^>]*>${partner.app.id}</code>`));
    const seen = (await appInstallations(partner)).find((i) => i.workspaceId === wsId);
    assert.ok(seen !== undefined, 'the app lists its new installation');
    const token = await accessToken(t, partner, seen.installationId, workspaceKey);
    assert.equal((await me(token)).statusCode, 200);

    // Connected already, unknown and blank IDs: the form again with what went wrong.
    const again = await owner.b.submit(appsUrl, appsUrl, { appId: partner.app.id });
    assert.equal(again.statusCode, 409);
    assert.match(again.body, /role="alert"[^>]*>[^<]*is already connected to this workspace/);
    const unknown = await owner.b.submit(appsUrl, appsUrl, { appId: 'no-such-app <b>' });
    assert.equal(unknown.statusCode, 404);
    assert.match(unknown.headers['content-type'] as string, /^text\/html/);
    assert.match(unknown.body, /App no-such-app &lt;b&gt; does not exist/);
    assert.match(unknown.body, /value="no-such-app &lt;b&gt;"/);
    assert.equal((await owner.b.submit(appsUrl, appsUrl, { appId: '   ' })).statusCode, 400);

    // Disconnect: a confirmation page first, then the post; the app's token stops.
    const confirmUrl = `${appsUrl}/${seen.installationId}/disconnect`;
    assert.match(list.body, new RegExp(`href="${confirmUrl}"`));
    const confirm = await owner.b.get(confirmUrl);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /loses access to this workspace at once/);
    const gone = await owner.b.post(confirmUrl, { _csrf: csrfOf(confirm.body) });
    assert.equal(gone.statusCode, 303);
    assert.equal(gone.headers.location, `${appsUrl}?done=disconnected`);
    assert.ok(!(await appInstallations(partner)).some((i) => i.workspaceId === wsId));
    assert.equal((await me(token)).statusCode, 401);
    assert.match((await owner.b.get(gone.headers.location)).body, /No app is connected/);
    // Twice, or another workspace's installation: not here.
    assert.equal((await owner.b.post(confirmUrl, { _csrf: csrfOf(confirm.body) })).statusCode, 404);
    assert.equal((await owner.b.get(`${appsUrl}/${partner.installationId}/disconnect`)).statusCode, 404);
    assert.equal((await owner.b.get(`${appsUrl}/abc/disconnect`)).statusCode, 404);

    assert.deepEqual(
      (await auditActions(wsId)).filter((r) => r.action.startsWith('app.')),
      [
        { action: 'app.connected', actor: owner.address, detail: `${partner.app.name} (${partner.app.id})` },
        {
          action: 'app.disconnected',
          actor: owner.address,
          detail: `${partner.app.name} (${partner.app.id})`,
        },
      ],
    );
  });

  test('an admin connects and disconnects apps too', async () => {
    const partner = await onboardApp(t, `Admin's app ${++counter}`);
    const { wsId } = await workspace();
    const admin = await member(wsId, 'admin');
    const appsUrl = `/console/workspaces/${wsId}/apps`;
    assert.equal((await admin.b.submit(appsUrl, appsUrl, { appId: partner.app.id })).statusCode, 303);
    const inst = (await appInstallations(partner)).find((i) => i.workspaceId === wsId)!;
    const confirmUrl = `${appsUrl}/${inst.installationId}/disconnect`;
    assert.equal((await admin.b.submit(confirmUrl, confirmUrl, {})).statusCode, 303);
  });

  test('owners change roles and remove members; the last owner can be neither demoted nor removed', async () => {
    const { wsId } = await workspace();
    const owner = await member(wsId);
    const admin = await member(wsId, 'admin');
    const viewer = await member(wsId, 'viewer');
    const membersUrl = `/console/workspaces/${wsId}/members`;
    const list = await owner.b.get(membersUrl);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, new RegExp(`href="${membersUrl}/${admin.accountId}"`));

    // The admin becomes a viewer.
    const adminUrl = `${membersUrl}/${admin.accountId}`;
    const adminPage = await owner.b.get(adminUrl);
    assert.match(adminPage.body, /<dd id="member-role">Admin<\/dd>/);
    assert.match(adminPage.body, /<label for="role">New role<\/label>/);
    const changed = await owner.b.post(`${adminUrl}/role`, { _csrf: csrfOf(adminPage.body), role: 'viewer' });
    assert.equal(changed.statusCode, 303);
    assert.equal(changed.headers.location, `${membersUrl}?done=role`);
    assert.match((await admin.b.get(`/console/workspaces/${wsId}`)).body, /<dd id="your-role">Viewer<\/dd>/);
    assert.equal(
      (await owner.b.post(`${adminUrl}/role`, { _csrf: csrfOf(adminPage.body), role: 'boss' })).statusCode,
      400,
    );

    // The only owner can neither step down nor be removed.
    const ownUrl = `${membersUrl}/${owner.accountId}`;
    const ownPage = await owner.b.get(ownUrl);
    assert.match(ownPage.body, /This is you/);
    const demote = await owner.b.post(`${ownUrl}/role`, { _csrf: csrfOf(ownPage.body), role: 'admin' });
    assert.equal(demote.statusCode, 409);
    assert.match(demote.body, /is the only owner of this workspace/);
    const remove = await owner.b.post(`${ownUrl}/remove`, { _csrf: csrfOf(ownPage.body) });
    assert.equal(remove.statusCode, 409);
    assert.match(remove.body, /Make another member an owner first/);

    // With a second owner, the first may step down.
    assert.equal(
      (await owner.b.post(`${adminUrl}/role`, { _csrf: csrfOf(adminPage.body), role: 'owner' })).statusCode,
      303,
    );
    assert.equal(
      (await owner.b.post(`${ownUrl}/role`, { _csrf: csrfOf(ownPage.body), role: 'admin' })).statusCode,
      303,
    );
    // Now an admin, the former owner manages no one.
    assert.equal((await owner.b.get(adminUrl)).statusCode, 403);
    assert.doesNotMatch((await owner.b.get(membersUrl)).body, new RegExp(`href="${membersUrl}/\\d+"`));

    // The new owner removes the viewer, whose unused invitation link dies with the membership.
    const pending = await inviteMember(db(), CLI_ACTOR, {
      workspaceId: wsId,
      email: viewer.address,
      role: 'owner',
    });
    const viewerUrl = `${membersUrl}/${viewer.accountId}`;
    const removed = await admin.b.submit(viewerUrl, `${viewerUrl}/remove`, {});
    assert.equal(removed.statusCode, 303);
    assert.equal(removed.headers.location, `${membersUrl}?done=removed`);
    assert.equal((await viewer.b.get(`/console/workspaces/${wsId}`)).statusCode, 404);
    assert.equal(
      (await browser().get(pathOf(invitationLink(t.config.publicUrl, pending.token)))).statusCode,
      410,
    );
    assert.equal((await admin.b.get(viewerUrl)).statusCode, 404);

    const rows = (await auditActions(wsId)).filter(
      (r) => r.action.startsWith('member.') && r.action !== 'member.invited',
    );
    assert.deepEqual(rows, [
      { action: 'member.role_changed', actor: owner.address, detail: `${admin.address}: admin → viewer` },
      { action: 'member.role_changed', actor: owner.address, detail: `${admin.address}: viewer → owner` },
      { action: 'member.role_changed', actor: owner.address, detail: `${owner.address}: owner → admin` },
      { action: 'member.removed', actor: admin.address, detail: `${viewer.address} (viewer)` },
    ]);
  });

  test('two owners stepping down at the same moment: one succeeds, the other is refused (409)', async () => {
    const { wsId } = await workspace();
    const a = await member(wsId);
    const b = await member(wsId);
    const members = `/console/workspaces/${wsId}/members`;
    const [pageA, pageB] = await Promise.all([a.b.get(members), b.b.get(members)]);
    const results = await Promise.all([
      a.b.post(`${members}/${a.accountId}/role`, { _csrf: csrfOf(pageA.body), role: 'viewer' }),
      b.b.post(`${members}/${b.accountId}/role`, { _csrf: csrfOf(pageB.body), role: 'viewer' }),
    ]);
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [303, 409]);
    const owners = await db()
      .selectFrom('console_memberships')
      .select('account_id')
      .where('workspace_id', '=', wsId)
      .where('role', '=', 'owner')
      .execute();
    assert.equal(owners.length, 1);
  });

  test('a viewer is offered no form on the settings pages and every action is refused (403)', async () => {
    const partner = await onboardApp(t, `Watched ${++counter}`);
    const { wsId } = await workspace();
    const installationId = (await connectInstallation(t.database.db, partner.app.id, wsId)).id;
    const owner = await member(wsId);
    const viewer = await member(wsId, 'viewer');
    const ws = `/console/workspaces/${wsId}`;
    for (const url of [`${ws}/key`, `${ws}/apps`, `${ws}/members`]) {
      const page = await viewer.b.get(url);
      assert.equal(page.statusCode, 200, url);
      // The only form is the header's sign-out.
      assert.deepEqual(
        [...page.body.matchAll(/<form [^>]*action="([^"]+)"/g)].map((m) => m[1]),
        ['/console/sign-out'],
        url,
      );
    }
    const apps = await viewer.b.get(`${ws}/apps`);
    assert.match(apps.body, new RegExp(`<td>${partner.app.name}<br />`));
    assert.doesNotMatch(apps.body, /\/disconnect"/);
    assert.doesNotMatch((await viewer.b.get(`${ws}/members`)).body, new RegExp(`href="${ws}/members/\\d+"`));
    assert.doesNotMatch((await viewer.b.get(ws)).body, /\/audit"/);
    const csrf = csrfOf((await viewer.b.get(ws)).body);
    const posts: [string, Record<string, string>][] = [
      [`${ws}/key`, {}],
      [`${ws}/apps`, { appId: partner.app.id }],
      [`${ws}/apps/${installationId}/disconnect`, {}],
      [`${ws}/members/${owner.accountId}/role`, { role: 'viewer' }],
      [`${ws}/members/${owner.accountId}/remove`, {}],
      [`${ws}/members/${viewer.accountId}/role`, { role: 'owner' }],
    ];
    for (const [url, form] of posts) {
      const res = await viewer.b.post(url, { _csrf: csrf, ...form });
      assert.equal(res.statusCode, 403, url);
      assert.match(res.body, /Not allowed/, url);
    }
    for (const url of [
      `${ws}/apps/${installationId}/disconnect`,
      `${ws}/members/${owner.accountId}`,
      `${ws}/audit`,
    ])
      assert.equal((await viewer.b.get(url)).statusCode, 403, url);
    assert.equal((await viewer.b.get('/console/audit')).statusCode, 403);
    // Nothing changed.
    assert.ok((await appInstallations(partner)).some((i) => i.installationId === installationId));
    const roles = await db()
      .selectFrom('console_memberships')
      .select(['account_id', 'role'])
      .where('workspace_id', '=', wsId)
      .orderBy('account_id')
      .execute();
    assert.deepEqual(roles, [
      { account_id: owner.accountId, role: 'owner' },
      { account_id: viewer.accountId, role: 'viewer' },
    ]);
    assert.deepEqual(await settingsActions(wsId), []);
  });

  test('every settings action needs the CSRF token (403 without it; nothing changes)', async () => {
    const partner = await onboardApp(t, `Guarded ${++counter}`);
    const { wsId } = await workspace();
    const installationId = (await connectInstallation(t.database.db, partner.app.id, wsId)).id;
    const owner = await member(wsId);
    const admin = await member(wsId, 'admin');
    const ws = `/console/workspaces/${wsId}`;
    const posts: [string, Record<string, string>][] = [
      [`${ws}/key`, {}],
      [`${ws}/apps`, { appId: partner.app.id }],
      [`${ws}/apps/${installationId}/disconnect`, {}],
      [`${ws}/members/${admin.accountId}/role`, { role: 'viewer' }],
      [`${ws}/members/${admin.accountId}/remove`, {}],
    ];
    for (const [url, form] of posts) {
      const missing = await owner.b.post(url, form);
      assert.equal(missing.statusCode, 403, url);
      assert.match(missing.body, /did not come from this console/, url);
      assert.equal((await owner.b.post(url, { ...form, _csrf: 'forged' })).statusCode, 403, url);
    }
    assert.ok((await appInstallations(partner)).some((i) => i.installationId === installationId));
    assert.deepEqual(await settingsActions(wsId), []);
    const roles = await db()
      .selectFrom('console_memberships')
      .select('role')
      .where('account_id', '=', admin.accountId)
      .execute();
    assert.deepEqual(roles, [{ role: 'admin' }]);
  });

  test("an app removing the creating app's tag through the API shows in the workspace's audit log", async () => {
    const creator = await onboardApp(t, `Creator ${++counter}`);
    const other = await onboardApp(t, `Other ${++counter}`);
    const { wsId, workspaceKey } = await workspace();
    const tokenOf = async (p: TestPartner) =>
      accessToken(t, p, (await connectInstallation(t.database.db, p.app.id, wsId)).id, workspaceKey);
    const [creatorToken, otherToken] = [await tokenOf(creator), await tokenOf(other)];
    const api = (method: 'GET' | 'POST' | 'DELETE', url: string, token: string, payload?: object) =>
      t.app.inject({
        method,
        url: `/api/v1${url}`,
        headers: { authorization: `Bearer ${token}` },
        ...(payload !== undefined ? { payload } : {}),
      });
    const created = await api('POST', '/datasets', creatorToken, {
      name: 'Handed over',
      schema: { properties: [{ name: 'id', type: 'integer' }] },
    });
    assert.equal(created.statusCode, 201, created.body);
    const dataset = created.json<{
      datasetId: string;
      datasetTags: { datasetTagId: string; platformAppId: string }[];
    }>();
    const tagOf = (appId: string) => dataset.datasetTags.find((x) => x.platformAppId === appId)?.datasetTagId;
    const actions = async () =>
      (await auditActions(wsId)).filter((r) => r.action === 'dataset.creator_untagged');

    // Removing a tag of an app other than the creator writes nothing; nor would the creator's own.
    const otherTag = tagOf(other.app.id);
    assert.ok(otherTag !== undefined);
    assert.equal(
      (await api('DELETE', `/datasets/${dataset.datasetId}/tags/${otherTag}`, creatorToken)).statusCode,
      204,
    );
    const back = await api('POST', `/datasets/${dataset.datasetId}/tags`, creatorToken, {
      platformAppId: other.app.id,
    });
    assert.equal(back.statusCode, 201);
    assert.deepEqual(await actions(), []);

    // The other app removes the creator's tag: allowed (as DXAPI allows it), and recorded.
    const creatorTag = tagOf(creator.app.id);
    assert.ok(creatorTag !== undefined);
    const removed = await api('DELETE', `/datasets/${dataset.datasetId}/tags/${creatorTag}`, otherToken);
    assert.equal(removed.statusCode, 204);
    assert.equal((await api('GET', `/datasets/${dataset.datasetId}`, creatorToken)).statusCode, 404);
    const rows = await actions();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]?.actor, `app ${other.app.name} (${other.app.id})`);

    // The owner reads it on the workspace's audit log page, in plain words.
    const owner = await member(wsId);
    const page = await owner.b.get(`/console/workspaces/${wsId}/audit`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Removed the creating app&#39;s access to a dataset/);
    assert.ok(
      page.body.includes(
        `&quot;Handed over&quot; (${dataset.datasetId}): ${creator.app.name} (${creator.app.id}), which created it, can no longer see it`,
      ),
      page.body,
    );
    assert.ok(page.body.includes(`app ${other.app.name} (${other.app.id})`));
  });

  test(`the audit log is paged, ${AUDIT_PAGE_SIZE} rows newest first, with an "Older" link; owners only`, async () => {
    const { wsId } = await workspace();
    const owner = await member(wsId);
    const admin = await member(wsId, 'admin');
    for (let i = 1; i <= AUDIT_PAGE_SIZE + 5; i++)
      await audit(db(), CLI_ACTOR, 'member.invited', { workspaceId: wsId, detail: `row ${i}` });
    const url = `/console/workspaces/${wsId}/audit`;
    const first = await owner.b.get(url);
    assert.equal(first.statusCode, 200);
    const details = (body: string) =>
      [...body.matchAll(/<td><span class="wrap">(row \d+)<\/span><\/td>/g)].map((m) => m[1]);
    const firstRows = details(first.body);
    assert.equal(firstRows.length, AUDIT_PAGE_SIZE);
    assert.equal(firstRows[0], `row ${AUDIT_PAGE_SIZE + 5}`);
    assert.match(first.body, /<th scope="col">When<\/th>/);
    assert.match(first.body, /<td><time datetime="[^"]+Z">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time><\/td>/);
    assert.doesNotMatch(first.body, />Newest</);
    const older = /<a href="([^"]+)" rel="next">Older<\/a>/.exec(first.body)?.[1];
    assert.ok(older !== undefined && older.startsWith(`${url}?before=`), first.body);
    const second = await owner.b.get(older);
    assert.equal(second.statusCode, 200);
    assert.deepEqual(details(second.body), ['row 5', 'row 4', 'row 3', 'row 2', 'row 1']);
    // The rest of the page: the invitations and sign-ins that came first; no older page.
    assert.match(second.body, /invitation\.accepted/);
    assert.doesNotMatch(second.body, /rel="next"/);
    assert.match(second.body, new RegExp(`<a href="${url}">Newest</a>`));
    assert.equal((await owner.b.get(`${url}?before=abc`)).statusCode, 400);
    // Admins do not read it, and are not offered it; owners are.
    assert.equal((await admin.b.get(url)).statusCode, 403);
    assert.doesNotMatch((await admin.b.get(`/console/workspaces/${wsId}`)).body, /\/audit"/);
    assert.match((await owner.b.get(`/console/workspaces/${wsId}`)).body, new RegExp(`href="${url}"`));
    assert.equal((await owner.b.get('/console/audit')).statusCode, 403);
  });

  test('the audit log is filtered by action and downloaded as CSV, formulas defused', async () => {
    const { wsId } = await workspace();
    const owner = await member(wsId);
    const admin = await member(wsId, 'admin');
    for (let i = 1; i <= 3; i++)
      await audit(db(), CLI_ACTOR, 'member.removed', { workspaceId: wsId, detail: `gone ${i}` });
    await audit(db(), CLI_ACTOR, 'workspace_key.rotated', { workspaceId: wsId, detail: '=HYPERLINK("x")' });
    const url = `/console/workspaces/${wsId}/audit`;
    const filtered = await owner.b.get(`${url}?action=member.removed`);
    assert.equal(filtered.statusCode, 200);
    assert.match(filtered.body, /<option value="member.removed" selected>/);
    const shown = [...filtered.body.matchAll(/<code class="action">([^<]+)<\/code>/g)].map((m) => m[1]);
    assert.deepEqual(shown, ['member.removed', 'member.removed', 'member.removed']);
    assert.ok(filtered.body.includes(`href="${url}.csv?action=member.removed" download`));
    assert.equal((await owner.b.get(`${url}?action=nothing.such`)).statusCode, 400);

    const csv = await owner.b.get(`${url}.csv`);
    assert.equal(csv.statusCode, 200);
    assert.match(csv.headers['content-type'] as string, /^text\/csv/);
    const lines = csv.body.split('\r\n');
    assert.equal(lines[0], 'at_utc,actor,action,workspace_id,detail');
    // Newest first; a detail a spreadsheet would run as a formula starts with a quote.
    assert.match(
      lines[1]!,
      new RegExp(
        `^\\d{4}-\\d\\d-\\d\\dT[\\d:.]+,cli,workspace_key\\.rotated,${wsId},"'=HYPERLINK\\(""x""\\)"$`,
      ),
    );
    assert.match(lines[2]!, new RegExp(`,cli,member\\.removed,${wsId},gone 3$`));
    assert.equal(lines.at(-1), '', 'the file ends with a line break');
    const onlyRemoved = (await owner.b.get(`${url}.csv?action=member.removed`)).body
      .split('\r\n')
      .slice(1, -1);
    assert.deepEqual(
      onlyRemoved.map((l) => l.split(',').at(-1)),
      ['gone 3', 'gone 2', 'gone 1'],
    );
    // As the pages: not for admins, and another workspace's log is not the owner's.
    assert.equal((await admin.b.get(`${url}.csv`)).statusCode, 403);
    const other = await workspace();
    assert.equal((await owner.b.get(`/console/workspaces/${other.wsId}/audit.csv`)).statusCode, 404);
    assert.equal((await owner.b.get('/console/audit.csv')).statusCode, 403);
    const op = await operator();
    const whole = await op.b.get('/console/audit.csv?action=member.removed');
    assert.equal(whole.statusCode, 200);
    assert.ok(whole.body.includes(`,member.removed,${wsId},gone 1\r\n`));
  });
});
