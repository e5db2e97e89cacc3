// Console accounts through HTTP, on SQLite and PostgreSQL (issue #36, points 1 and 2): the
// invitation form's default role; open invitations listed, withdrawn and sent again; "invitation
// pending" on the operator's list; used links that say so; invitations to an existing account
// accepted signed in; the account page (name, password); one-time reset links from the operator
// and by mail (a real SMTP server the test starts), none revealing whether an address has an account.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from 'prom-client';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import {
  ConsoleBrowser,
  csrfOf,
  signedInMember,
  signedInOperator,
  TEST_PASSWORD,
  unescapeHtml,
} from '../support/console-browser.js';
import { resetLinkIn, startSmtpSink, MAIL_FROM, type SmtpSink } from '../support/smtp-sink.js';
import { buildApp } from '../../src/http/app.js';
import { createWorkspace } from '../../src/domain/identity/workspaces.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { CLI_ACTOR } from '../../src/domain/console/audit.js';
import { invitationLink, inviteMember } from '../../src/domain/console/people.js';
import {
  issueResetLink,
  RESET_REQUESTS_PER_WINDOW,
  RESET_TTL_MS,
} from '../../src/domain/console/password-resets.js';
import { SIGN_IN_MAX_FAILURES } from '../../src/domain/console/sign-in.js';
import { hashSecret } from '../../src/lib/secrets.js';
import type { ConsoleRole } from '../../src/domain/console/roles.js';

const PASSWORD = TEST_PASSWORD;
const NEW_PASSWORD = 'a brand new passphrase for this';
let counter = 0;

/** A link's path and query, as a browser requests it. */
const pathOf = (link: string) => {
  const u = new URL(link);
  return `${u.pathname}${u.search}`;
};

await forEachDatabase('console accounts, invitations and recovery', (target) => {
  let t: Fixture;
  let sink: SmtpSink;
  let op: ConsoleBrowser;
  let opEmail: string;
  before(async () => {
    sink = await startSmtpSink();
    t = await startFixture(target, { ROLES: 'api', ...sink.env });
    opEmail = email('operator');
    op = await signedInOperator(t, opEmail);
  });
  after(async () => {
    await t.close();
    await sink.close();
  });

  const db = () => consoleDb(t.database.db);
  const browser = (ip?: string) => new ConsoleBrowser(() => t.app, ip);
  function email(who: string) {
    return `${who}.${++counter}.${target.name}@example.org`;
  }
  const workspace = async (name = `Campaign ${++counter}`) =>
    (await createWorkspace(t.database.db, { displayName: name })).workspace.id;
  const invite = async (wsId: number, address: string, role: ConsoleRole, now = Date.now()) =>
    invitationLink(
      t.config.publicUrl,
      (await inviteMember(db(), CLI_ACTOR, { workspaceId: wsId, email: address, role }, now)).token,
    );
  const member = async (wsId: number, role: ConsoleRole = 'owner') => {
    const address = email(role);
    return { b: await signedInMember(t, wsId, role, address), address };
  };
  /** Posts a form from `pageUrl` with the page's CSRF token. */
  const submit = (b: ConsoleBrowser, pageUrl: string, action: string, form: Record<string, string>) =>
    b.submit(pageUrl, action, form);
  const auditOf = (action: string) =>
    db().selectFrom('console_audit').selectAll().where('action', '=', action).orderBy('id').execute();
  const accountOf = (address: string) =>
    db().selectFrom('console_accounts').selectAll().where('email', '=', address).executeTakeFirstOrThrow();

  /** The open invitations of the members page: id, email and status text, in page order. */
  function invitationsOn(page: string): { id: string; email: string; row: string }[] {
    const section = page.slice(page.indexOf('<h2>Invitations</h2>'));
    const rows = section.split('<tr>').slice(2);
    return rows.flatMap((row) => {
      const id = /name="invitation" value="([0-9a-f]{64})"/.exec(row)?.[1] ?? '';
      const address = /<td>\s*([^<\s]+@[^<\s]+)<br/.exec(row)?.[1];
      return address === undefined ? [] : [{ id, email: address, row }];
    });
  }

  test('the invitation form starts on the least powerful role; an admin is offered admin and viewer', async () => {
    const wsId = await workspace();
    const roles = async (b: ConsoleBrowser) => {
      const page = (await b.get(`/console/workspaces/${wsId}`)).body;
      return [...page.matchAll(/<option value="(\w+)"\s*(selected)?\s*>/g)].map(
        (m) => `${m[1]}${m[2] ? '*' : ''}`,
      );
    };
    assert.deepEqual(await roles((await member(wsId, 'owner')).b), ['viewer*', 'admin', 'owner']);
    assert.deepEqual(await roles((await member(wsId, 'admin')).b), ['viewer*', 'admin']);
    assert.deepEqual(await roles(op), ['viewer*', 'admin', 'owner']);
  });

  test('owners list pending and expired invitations, withdraw one and send another again', async () => {
    const wsId = await workspace();
    const owner = await member(wsId, 'owner');
    const pendingEmail = email('pending');
    const created = await submit(
      owner.b,
      `/console/workspaces/${wsId}`,
      `/console/workspaces/${wsId}/invitations`,
      {
        email: pendingEmail,
        role: 'viewer',
      },
    );
    assert.equal(created.statusCode, 201);
    const pendingLink = unescapeHtml(/id="invitation-link">([^<]+)</.exec(created.body)![1]!);
    const expiredEmail = email('expired');
    const expiredLink = await invite(wsId, expiredEmail, 'admin', Date.now() - 25 * 3_600_000);

    const membersUrl = `/console/workspaces/${wsId}/members`;
    const page = (await owner.b.get(membersUrl)).body;
    const listed = invitationsOn(page);
    assert.deepEqual(
      listed.map((i) => i.email),
      [pendingEmail, expiredEmail],
      'pending first, then expired',
    );
    const [pending, expired] = listed as [(typeof listed)[0], (typeof listed)[0]];
    assert.match(pending.row, /Viewer/);
    assert.match(
      pending.row,
      /Pending, until <time datetime="[^"]+">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/,
    );
    assert.match(pending.row, new RegExp(`invited by ${owner.address.replace('.', '\\.')}`));
    assert.match(expired.row, /Admin/);
    assert.match(expired.row, /<strong>Expired<\/strong>/);
    assert.match(expired.row, /invited by the operator \(command line\)/);
    // The page names an invitation by its stored hash, never by its link's token.
    const token = new URL(pendingLink).searchParams.get('token')!;
    assert.equal(pending.id, hashSecret(token));
    assert.ok(!page.includes(token));

    // Withdrawn: the link stops working and says to ask for a new one.
    const revoked = await submit(
      owner.b,
      membersUrl,
      `${membersUrl.replace('/members', '')}/invitations/revoke`,
      {
        invitation: pending.id,
      },
    );
    assert.equal(revoked.statusCode, 303);
    assert.equal(revoked.headers.location, `${membersUrl}?done=revoked`);
    const dead = await browser().get(pathOf(pendingLink));
    assert.equal(dead.statusCode, 410);
    assert.match(dead.body, /expired or was withdrawn\. Ask for a new one\./);
    const after = (await owner.b.get(`${membersUrl}?done=revoked`)).body;
    assert.match(after, /The invitation is withdrawn/);
    assert.deepEqual(
      invitationsOn(after).map((i) => i.email),
      [expiredEmail],
    );

    // Sent again: a new link that works for 24 hours; the old one stops.
    const resent = await submit(owner.b, membersUrl, `/console/workspaces/${wsId}/invitations/resend`, {
      invitation: expired.id,
    });
    assert.equal(resent.statusCode, 201);
    const newLink = unescapeHtml(/id="invitation-link">([^<]+)</.exec(resent.body)![1]!);
    assert.notEqual(newLink, expiredLink);
    const hours =
      (Date.parse(/until\s+<time datetime="([^"]+)">/.exec(resent.body)![1]!) - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, String(hours));
    assert.equal((await browser().get(pathOf(expiredLink))).statusCode, 410);
    const invitee = browser();
    assert.equal((await invitee.accept(newLink, 'Ed Expired', PASSWORD)).statusCode, 303);
    assert.equal((await invitee.signIn(expiredEmail, PASSWORD)).statusCode, 303);
    assert.match((await invitee.get(`/console/workspaces/${wsId}`)).body, /<dd id="your-role">Admin<\/dd>/);
    assert.match((await owner.b.get(membersUrl)).body, /id="no-invitations"/);

    // Both are in the audit log, by the owner, with whom and which role.
    const ofWs = async (action: string) => (await auditOf(action)).filter((r) => r.workspace_id === wsId);
    assert.deepEqual(
      (await ofWs('invitation.revoked')).map((r) => [r.actor, r.detail]),
      [[owner.address, `${pendingEmail} as viewer`]],
    );
    assert.deepEqual(
      (await ofWs('invitation.resent')).map((r) => [r.actor, r.detail]),
      [[owner.address, `${expiredEmail} as admin`]],
    );
    // An invitation already gone is a 404 page, not a 500.
    const again = await submit(owner.b, membersUrl, `/console/workspaces/${wsId}/invitations/revoke`, {
      invitation: pending.id,
    });
    assert.equal(again.statusCode, 404);
    const junk = await submit(owner.b, membersUrl, `/console/workspaces/${wsId}/invitations/resend`, {
      invitation: 'not-a-hash',
    });
    assert.equal(junk.statusCode, 404);
  });

  test('viewers see no invitations and change none; admins handle only the roles they may invite', async () => {
    const wsId = await workspace();
    await member(wsId, 'owner');
    const ownerLink = await invite(wsId, email('second-owner'), 'owner');
    await invite(wsId, email('some-viewer'), 'viewer');
    const membersUrl = `/console/workspaces/${wsId}/members`;
    const count = async () =>
      (
        await db()
          .selectFrom('console_invitations')
          .select('token_hash')
          .where('workspace_id', '=', wsId)
          .where('used_at', 'is', null)
          .execute()
      ).length;
    const ownerId = hashSecret(new URL(ownerLink).searchParams.get('token')!);

    const viewer = await member(wsId, 'viewer');
    const seen = (await viewer.b.get(membersUrl)).body;
    assert.doesNotMatch(seen, /<h2>Invitations<\/h2>/);
    assert.doesNotMatch(seen, /name="invitation"/);
    for (const action of ['revoke', 'resend']) {
      const refused = await submit(
        viewer.b,
        membersUrl,
        `/console/workspaces/${wsId}/invitations/${action}`,
        {
          invitation: ownerId,
        },
      );
      assert.equal(refused.statusCode, 403, action);
    }

    const admin = await member(wsId, 'admin');
    const adminPage = (await admin.b.get(membersUrl)).body;
    const rows = invitationsOn(adminPage);
    const ownerRow = rows.find((r) => r.row.includes('Owner'))!;
    assert.equal(ownerRow.id, '', 'no buttons for an owner invitation');
    assert.match(ownerRow.row, /An owner can change it/);
    const viewerRow = rows.find((r) => r.row.includes('Viewer'))!;
    const refused = await submit(admin.b, membersUrl, `/console/workspaces/${wsId}/invitations/revoke`, {
      invitation: ownerId,
    });
    assert.equal(refused.statusCode, 403);
    assert.equal(await count(), 2);
    const ok = await submit(admin.b, membersUrl, `/console/workspaces/${wsId}/invitations/revoke`, {
      invitation: viewerRow.id,
    });
    assert.equal(ok.statusCode, 303);
    assert.equal(await count(), 1);

    // Without the CSRF token of the session, nothing happens.
    assert.equal(
      (await admin.b.post(`/console/workspaces/${wsId}/invitations/revoke`, { invitation: ownerId }))
        .statusCode,
      403,
    );
    // Another workspace's invitation cannot be reached through this one.
    const other = await workspace();
    const otherLink = await invite(other, email('elsewhere'), 'viewer');
    const otherId = hashSecret(new URL(otherLink).searchParams.get('token')!);
    const owner = await member(wsId, 'owner');
    const cross = await submit(owner.b, membersUrl, `/console/workspaces/${wsId}/invitations/revoke`, {
      invitation: otherId,
    });
    assert.equal(cross.statusCode, 404);
    assert.equal((await browser().get(pathOf(otherLink))).statusCode, 200);
  });

  test('the operator\'s workspace list says an owner\'s invitation is pending, not "none yet"', async () => {
    const rowOf = async (wsId: number) => {
      const page = (await op.get('/console/operator/workspaces')).body;
      const at = page.indexOf(`href="/console/workspaces/${wsId}"`);
      assert.ok(at > 0);
      return page.slice(at, page.indexOf('</tr>', at));
    };
    const wsId = await workspace();
    assert.match(await rowOf(wsId), /none yet/);
    const late = email('late-owner');
    await invite(wsId, late, 'owner', Date.now() - 25 * 3_600_000);
    assert.match(await rowOf(wsId), /none yet/, 'an expired invitation is not pending');
    const address = email('new-owner');
    const link = await invite(wsId, address, 'owner');
    const pendingRow = await rowOf(wsId);
    assert.doesNotMatch(pendingRow, /none yet/);
    assert.match(pendingRow, new RegExp(`${address.replace(/\./g, '\\.')} \\(invitation pending\\)`));
    assert.equal((await browser().accept(link, 'New Owner', PASSWORD)).statusCode, 303);
    const ownedRow = await rowOf(wsId);
    assert.match(ownedRow, new RegExp(address.replace(/\./g, '\\.')));
    assert.doesNotMatch(ownedRow, /invitation pending/);
  });

  test('a used invitation link says it was accepted and offers sign-in; an expired one says to ask again', async () => {
    const wsId = await workspace();
    const address = email('owner');
    const link = await invite(wsId, address, 'owner');
    const b = browser();
    assert.equal((await b.accept(link, 'Una Used', PASSWORD)).statusCode, 303);
    const used = await browser().get(pathOf(link));
    assert.equal(used.statusCode, 410);
    assert.match(used.body, /<h1>Invitation already accepted<\/h1>/);
    assert.match(used.body, /<a href="\/console\/sign-in">Sign in<\/a>/);
    assert.doesNotMatch(used.body, /Ask for a new one/);
    // A second submission of the form (two tabs) is told the same.
    const twice = await b.post('/console/invitation', {
      _csrf: csrfOf((await b.get('/console/sign-in')).body),
      token: new URL(link).searchParams.get('token')!,
      displayName: 'Una',
      password: PASSWORD,
      confirm: PASSWORD,
    });
    assert.equal(twice.statusCode, 410);
    assert.match(twice.body, /already accepted/);

    const expired = await invite(wsId, email('late'), 'viewer', Date.now() - 25 * 3_600_000);
    const late = await browser().get(pathOf(expired));
    assert.equal(late.statusCode, 410);
    assert.match(late.body, /expired or was withdrawn\. Ask for a new one\./);
    assert.doesNotMatch(late.body, /already accepted/);
    assert.equal((await browser().get('/console/invitation?token=dxi_unknown')).statusCode, 410);
  });

  test('an invitation to an existing account is accepted signed in as it, never with a password on the link', async () => {
    const wsA = await workspace();
    const wsB = await workspace();
    const { address } = await member(wsA);
    const link = await invite(wsB, address, 'admin');
    const token = new URL(link).searchParams.get('token')!;

    // Not signed in: the page sends them to sign in, with no password field of its own.
    const holder = browser();
    const page = await holder.get(pathOf(link));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /already have a console account/);
    assert.doesNotMatch(page.body, /type="password"/);
    const signInHref = unescapeHtml(
      /<a href="(\/console\/sign-in\?[^"]+)">Sign in to accept<\/a>/.exec(page.body)![1]!,
    );
    // The page has no form of its own; the sign-in page's token is the same browser's.
    const holderCsrf = csrfOf((await holder.get('/console/sign-in')).body);
    const takeover = await holder.post('/console/invitation', {
      _csrf: holderCsrf,
      token,
      displayName: 'Mallory',
      password: 'mallory chose this one',
      confirm: 'mallory chose this one',
    });
    assert.equal(takeover.statusCode, 403);
    assert.match(takeover.body, new RegExp(`Sign in as ${address.replace(/\./g, '\\.')}`));
    // Even the right password, typed on the link's form, is not taken.
    const typed = await holder.post('/console/invitation', {
      _csrf: holderCsrf,
      token,
      password: PASSWORD,
    });
    assert.equal(typed.statusCode, 403);
    assert.equal((await browser().signIn(address, 'mallory chose this one')).statusCode, 401);

    // Signed in as someone else: told to sign out first, and refused.
    const other = await member(wsA);
    const otherPage = await other.b.get(pathOf(link));
    assert.match(otherPage.body, /signed in as someone else/);
    assert.doesNotMatch(otherPage.body, />Accept invitation<\/button>/);
    const refused = await other.b.post('/console/invitation', { _csrf: csrfOf(otherPage.body), token });
    assert.equal(refused.statusCode, 403);
    const memberships = await db()
      .selectFrom('console_memberships')
      .select('account_id')
      .where('workspace_id', '=', wsB)
      .execute();
    assert.equal(memberships.length, 0);
    // "Switch to …" ends that session and comes back to the link after sign-in.
    const out = await other.b.post('/console/sign-out', {
      _csrf: csrfOf(otherPage.body),
      next: pathOf(link),
    });
    assert.equal(out.statusCode, 303);
    assert.equal(
      out.headers.location,
      `/console/sign-in?${new URLSearchParams({ next: pathOf(link) }).toString()}`,
    );

    // The person: sign-in comes back to the link, which then accepts with one button.
    const person = browser();
    const signInPage = await person.get(signInHref);
    assert.equal(signInPage.statusCode, 200);
    assert.match(signInPage.body, new RegExp(`name="email"[^>]*value="${address.replace(/\./g, '\\.')}"`));
    const next = unescapeHtml(/name="next" value="([^"]+)"/.exec(signInPage.body)![1]!);
    assert.equal(next, pathOf(link));
    const signedIn = await person.post('/console/sign-in', {
      _csrf: csrfOf(signInPage.body),
      email: address,
      password: PASSWORD,
      next,
    });
    assert.equal(signedIn.statusCode, 303);
    assert.equal(signedIn.headers.location, pathOf(link));
    const accept = await person.get(pathOf(link));
    assert.match(accept.body, /You are signed in as/);
    assert.doesNotMatch(accept.body, /type="password"/);
    const accepted = await person.post('/console/invitation', { _csrf: csrfOf(accept.body), token });
    assert.equal(accepted.statusCode, 303);
    assert.equal(accepted.headers.location, `/console/workspaces/${wsB}`);
    assert.match((await person.get(`/console/workspaces/${wsB}`)).body, /<dd id="your-role">Admin<\/dd>/);
    assert.equal((await person.get(pathOf(link))).statusCode, 410);
  });

  test('sign-in goes back only to a console page (no open redirect)', async () => {
    const { address } = await member(await workspace());
    for (const next of [
      'https://evil.example/console/',
      '//evil.example/console/x',
      '/console/../api/v1',
      '/\\evil.example',
      '/console//evil.example',
    ]) {
      const b = browser();
      const page = await b.get(`/console/sign-in?${new URLSearchParams({ next }).toString()}`);
      assert.doesNotMatch(page.body, /name="next"/, next);
      const res = await b.post('/console/sign-in', {
        _csrf: csrfOf(page.body),
        email: address,
        password: PASSWORD,
        next,
      });
      assert.equal(res.statusCode, 303, next);
      assert.equal(res.headers.location, '/console/home', next);
    }
  });

  test('the account page changes the display name, and the password after the current one', async () => {
    const wsId = await workspace();
    const { b, address } = await member(wsId);
    const elsewhere = browser('192.0.2.40');
    assert.equal((await elsewhere.signIn(address, PASSWORD)).statusCode, 303);
    const page = await b.get('/console/account');
    assert.equal(page.statusCode, 200);
    assert.match(page.body, new RegExp(`<dd id="account-email">${address.replace(/\./g, '\\.')}</dd>`));
    assert.match((await b.get('/console/home')).body, /<a href="\/console\/account">Your account<\/a>/);
    assert.equal((await browser().get('/console/account')).statusCode, 303, 'signed out: to sign-in');

    const blank = await submit(b, '/console/account', '/console/account/name', { displayName: '   ' });
    assert.equal(blank.statusCode, 400);
    assert.match(blank.body, /display name of 1 to 200/);
    const renamed = await submit(b, '/console/account', '/console/account/name', {
      displayName: 'Renata Renamed',
    });
    assert.equal(renamed.statusCode, 303);
    assert.equal(renamed.headers.location, '/console/account?done=name');
    assert.match((await b.get('/console/account?done=name')).body, /Renata Renamed \(/);
    assert.equal((await accountOf(address)).display_name, 'Renata Renamed');

    const change = (form: Record<string, string>) =>
      submit(b, '/console/account', '/console/account/password', form);
    const wrong = await change({
      current: 'not my password at all',
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    assert.equal(wrong.statusCode, 400);
    assert.match(wrong.body, /current password is not right/);
    const weak = await change({ current: PASSWORD, password: 'short', confirm: 'short' });
    assert.equal(weak.statusCode, 400);
    assert.match(weak.body, /at least 12 characters/);
    const differ = await change({ current: PASSWORD, password: NEW_PASSWORD, confirm: `${NEW_PASSWORD}!` });
    assert.equal(differ.statusCode, 400);
    assert.match(differ.body, /not the same/);
    const pendingLink = await issueResetLink(db(), CLI_ACTOR, address);
    const changed = await change({ current: PASSWORD, password: NEW_PASSWORD, confirm: NEW_PASSWORD });
    assert.equal(changed.statusCode, 303);
    assert.equal(changed.headers.location, '/console/account?done=password');
    // Here still signed in; elsewhere signed out; a reset link issued before is void.
    assert.equal((await b.get('/console/home')).statusCode, 200);
    assert.equal((await elsewhere.get('/console/home')).statusCode, 303);
    assert.equal(
      (await browser().get(`/console/reset-password?token=${pendingLink!.token}`)).statusCode,
      410,
    );
    assert.equal((await browser().signIn(address, PASSWORD)).statusCode, 401);
    assert.equal((await browser().signIn(address, NEW_PASSWORD)).statusCode, 303);
    const id = (await accountOf(address)).id;
    const rows = (
      await db().selectFrom('console_audit').selectAll().where('account_id', '=', id).orderBy('id').execute()
    ).map((r) => r.action);
    assert.ok(rows.includes('account.renamed') && rows.includes('password.changed'), rows.join());
    assert.ok(!JSON.stringify(await auditOf('password.changed')).includes(NEW_PASSWORD));
  });

  test(`wrong current passwords count against the sign-in limit (${SIGN_IN_MAX_FAILURES} per email and address)`, async () => {
    const { address } = await member(await workspace());
    const b = browser('198.51.100.21');
    assert.equal((await b.signIn(address, PASSWORD)).statusCode, 303);
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++) {
      const res = await submit(b, '/console/account', '/console/account/password', {
        current: 'a wrong guess number ' + i,
        password: NEW_PASSWORD,
        confirm: NEW_PASSWORD,
      });
      assert.equal(res.statusCode, 400);
    }
    const limited = await submit(b, '/console/account', '/console/account/password', {
      current: PASSWORD,
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal((await browser('198.51.100.21').signIn(address, PASSWORD)).statusCode, 429);
  });

  test('the operator issues a reset link; it works once, ends every session and grants nothing else', async () => {
    const wsId = await workspace();
    const { b, address } = await member(wsId, 'viewer');
    const home = await op.get('/console/operator');
    assert.match(home.body, /<button type="submit">Issue reset link<\/button>/);
    const issue = (to: string) =>
      submit(op, '/console/operator', '/console/operator/reset-links', { email: to });

    const unknown = await issue(email('nobody'));
    assert.equal(unknown.statusCode, 400);
    assert.match(unknown.body, /No console account has the email/);
    const invalid = await issue('not an address');
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /valid email address/);

    const first = await issue(address.toUpperCase());
    assert.equal(first.statusCode, 201);
    const firstLink = unescapeHtml(/id="reset-link">([^<]+)</.exec(first.body)![1]!);
    const issued = await issue(address);
    const link = unescapeHtml(/id="reset-link">([^<]+)</.exec(issued.body)![1]!);
    assert.ok(link.startsWith(`${t.config.publicUrl}/console/reset-password?token=dxr_`), link);
    const token = new URL(link).searchParams.get('token')!;
    // Stored as its hash only; the newer link voided the first.
    const stored = await db()
      .selectFrom('console_password_resets')
      .selectAll()
      .where('account_id', '=', (await accountOf(address)).id)
      .execute();
    assert.deepEqual(
      stored.map((r) => r.token_hash),
      [hashSecret(token)],
    );
    assert.equal((await browser().get(pathOf(firstLink))).statusCode, 410);
    const minutes = (Number(stored[0]!.expires_at) - Date.now()) / 60_000;
    assert.ok(minutes > 59 && minutes <= 60, String(minutes));

    // Nobody else reaches the form.
    assert.equal(
      (
        await b.post('/console/operator/reset-links', {
          _csrf: csrfOf((await b.get('/console/home')).body),
          email: address,
        })
      ).statusCode,
      404,
    );

    const person = browser();
    const page = await person.get(pathOf(link));
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<h1>Choose a new password<\/h1>/);
    const set = (password: string, confirm = password) =>
      person.post('/console/reset-password', { _csrf: csrfOf(page.body), token, password, confirm });
    const short = await set('short');
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /at least 12 characters/);
    assert.equal((await set(NEW_PASSWORD, `${NEW_PASSWORD}?`)).statusCode, 400);
    const done = await set(NEW_PASSWORD);
    assert.equal(done.statusCode, 303);
    assert.equal(done.headers.location, '/console/sign-in?reset=1');
    assert.match((await person.get('/console/sign-in?reset=1')).body, /Your new password is set/);

    // Every session of the account ended; the old password is gone; the link is spent.
    assert.equal((await b.get('/console/home')).statusCode, 303);
    assert.equal((await browser().signIn(address, PASSWORD)).statusCode, 401);
    const after = browser();
    assert.equal((await after.signIn(address, NEW_PASSWORD)).statusCode, 303);
    assert.equal((await browser().get(pathOf(link))).statusCode, 410);
    assert.equal((await set(`${NEW_PASSWORD} again`)).statusCode, 410);
    // Still a viewer, and no operator.
    assert.equal((await accountOf(address)).is_operator, 0);
    assert.equal((await after.get('/console/operator')).statusCode, 404);
    assert.match((await after.get(`/console/workspaces/${wsId}`)).body, /<dd id="your-role">Viewer<\/dd>/);

    const issuedRows = (await auditOf('password.reset_link_issued')).filter((r) => r.detail === address);
    assert.deepEqual(
      issuedRows.map((r) => r.actor),
      [opEmail, opEmail],
    );
    assert.deepEqual(
      (await auditOf('password.reset')).filter((r) => r.detail === address).map((r) => r.actor),
      [address],
    );
  });

  test('a reset link expires after an hour; an unknown one is refused the same way', async () => {
    const { address } = await member(await workspace());
    const old = await issueResetLink(db(), CLI_ACTOR, address, Date.now() - RESET_TTL_MS - 1000);
    const res = await browser().get(`/console/reset-password?token=${old!.token}`);
    assert.equal(res.statusCode, 410);
    assert.match(res.body, /expired or was already used/);
    assert.equal((await browser().get('/console/reset-password?token=dxr_unknown')).statusCode, 410);
    assert.equal((await browser().get('/console/reset-password')).statusCode, 410);
    assert.equal((await browser().signIn(address, PASSWORD)).statusCode, 303);
  });

  test('with SMTP, a person asks for a link by mail and uses it; an unknown address gets the same answer', async () => {
    const { b, address } = await member(await workspace());
    const signInPage = (await browser().get('/console/sign-in')).body;
    assert.match(signInPage, /<a href="\/console\/forgot-password">Forgot your password\?<\/a>/);

    const ask = async (to: string) => {
      const asker = browser();
      return asker.submit('/console/forgot-password', '/console/forgot-password', { email: to });
    };
    const known = await ask(address);
    assert.equal(known.statusCode, 200);
    assert.match(known.body, /<h1>Check your mail<\/h1>/);
    const mail = await sink.waitForMail(address);
    assert.equal(mail.headers.from, MAIL_FROM);
    assert.match(mail.headers.subject ?? '', /console password/);
    const link = resetLinkIn(mail);
    assert.ok(link.startsWith(`${t.config.publicUrl}/console/reset-password?token=dxr_`));

    const nobody = email('nobody');
    const unknown = await ask(nobody);
    assert.equal(unknown.statusCode, 200);
    const same = (body: string, who: string) =>
      body.replaceAll(who, 'ADDRESS').replace(/name="_csrf" value="[^"]+"/g, '');
    assert.equal(same(unknown.body, nobody), same(known.body, address));
    const invalid = await ask('not an address');
    assert.equal(invalid.statusCode, 400);
    assert.match(invalid.body, /valid email address/);

    // The link by mail resets the password like the operator's.
    const person = browser();
    const page = await person.get(pathOf(link));
    assert.equal(page.statusCode, 200);
    const done = await person.post('/console/reset-password', {
      _csrf: csrfOf(page.body),
      token: new URL(link).searchParams.get('token')!,
      password: NEW_PASSWORD,
      confirm: NEW_PASSWORD,
    });
    assert.equal(done.statusCode, 303);
    assert.equal((await b.get('/console/home')).statusCode, 303, 'the old session ended');
    assert.equal((await browser().signIn(address, NEW_PASSWORD)).statusCode, 303);
    assert.deepEqual(
      (await auditOf('password.reset_requested')).filter((r) => r.detail === address).map((r) => r.actor),
      [address],
    );

    // Nothing was sent to the address without an account.
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(sink.mailTo(nobody), []);
  });

  test(`links by mail are limited to ${RESET_REQUESTS_PER_WINDOW} an hour per address, whether or not it has an account`, async () => {
    const { address } = await member(await workspace());
    for (const to of [address, email('nobody')]) {
      for (let i = 0; i < RESET_REQUESTS_PER_WINDOW; i++)
        assert.equal(
          (await browser().submit('/console/forgot-password', '/console/forgot-password', { email: to }))
            .statusCode,
          200,
        );
      const limited = await browser().submit('/console/forgot-password', '/console/forgot-password', {
        email: to.toUpperCase(),
      });
      assert.equal(limited.statusCode, 429, to);
      assert.ok(Number(limited.headers['retry-after']) > 3000);
      assert.match(limited.body, /Wait an hour/);
    }
    // The address with an account got one message per request that was answered.
    await sink.waitForMail(address, RESET_REQUESTS_PER_WINDOW);
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(sink.mailTo(address).length, RESET_REQUESTS_PER_WINDOW);
    // A newer link voids the older ones: one of the three works.
    const links = sink.mailTo(address).map(resetLinkIn);
    const statuses = await Promise.all(links.map(async (l) => (await browser().get(pathOf(l))).statusCode));
    assert.deepEqual([...statuses].sort(), [200, 410, 410]);
  });

  test('without SMTP, the sign-in and forgot-password pages say to ask the operator', async () => {
    const app = await buildApp(
      { ...t.config, mail: null },
      { ...t.services, metrics: new Registry() },
      { logger: false },
    );
    try {
      const b = new ConsoleBrowser(() => app);
      const signIn = (await b.get('/console/sign-in')).body;
      assert.doesNotMatch(signIn, /href="\/console\/forgot-password"/);
      assert.match(signIn, /Ask the service's operator for a password reset link/);
      const forgot = await b.get('/console/forgot-password');
      assert.equal(forgot.statusCode, 200);
      assert.match(forgot.body, /id="ask-operator"/);
      assert.doesNotMatch(forgot.body, /<form method="post" action="\/console\/forgot-password"/);
      const posted = await b.post('/console/forgot-password', {
        _csrf: csrfOf(signIn),
        email: 'x@example.org',
      });
      assert.equal(posted.statusCode, 404);
    } finally {
      await app.close();
    }
  });
});
