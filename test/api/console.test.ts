// The web console's foundation through HTTP, on SQLite and PostgreSQL: invitations, sign-in and
// sign-out, sessions and their cookies, CSRF, the rate limit, roles, and the audit log.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { ConsoleBrowser, csrfOf, signedInMember, TEST_PASSWORD } from '../support/console-browser.js';
import { Registry } from 'prom-client';
import { buildApp } from '../../src/http/app.js';
import { createWorkspace } from '../../src/domain/identity/workspaces.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { CLI_ACTOR } from '../../src/domain/console/audit.js';
import { invitationLink, inviteMember, inviteOperator } from '../../src/domain/console/people.js';
import { SIGN_IN_MAX_FAILURES } from '../../src/domain/console/sign-in.js';
import { hashSecret } from '../../src/lib/secrets.js';
import type { ConsoleRole } from '../../src/domain/console/roles.js';
import { Script } from 'node:vm';

const PASSWORD = TEST_PASSWORD;
let counter = 0;

await forEachDatabase('web console', (target) => {
  let t: Fixture;
  before(async () => {
    t = await startFixture(target, { ROLES: 'api' });
  });
  after(() => t.close());

  const db = () => consoleDb(t.database.db);
  const browser = (ip?: string) => new ConsoleBrowser(() => t.app, ip);
  const email = (who: string) => `${who}.${++counter}@example.org`;

  async function workspace(name = `Campaign ${++counter}`): Promise<number> {
    return (await createWorkspace(t.database.db, { displayName: name })).workspace.id;
  }

  async function invite(workspaceId: number, address: string, role: ConsoleRole = 'owner', now = Date.now()) {
    const inv = await inviteMember(db(), CLI_ACTOR, { workspaceId, email: address, role }, now);
    return invitationLink(t.config.publicUrl, inv.token);
  }

  /** A member who accepted an invitation and is signed in. */
  async function member(workspaceId: number, role: ConsoleRole = 'owner') {
    const address = email(role);
    return { b: await signedInMember(t, workspaceId, role, address), address };
  }

  test('invite → accept → sign in → the workspace home shows the Workspace ID and the role', async () => {
    const wsId = await workspace('Friends of the Park');
    const address = email('owner');
    const link = await invite(wsId, address);
    assert.ok(link.startsWith(`${t.config.publicUrl}/console/invitation?token=dxi_`), link);
    const b = browser();
    const page = await b.get(new URL(link).pathname + new URL(link).search);
    assert.equal(page.statusCode, 200);
    assert.match(page.headers['content-type'] as string, /^text\/html/);
    assert.match(page.body, /Friends of the Park/);
    assert.match(page.body, /<label for="password">/);
    const accepted = await b.accept(link, 'Pat Owner', PASSWORD);
    assert.equal(accepted.statusCode, 303);
    assert.equal(accepted.headers.location, '/console/sign-in?accepted=1');
    const signedIn = await b.signIn(address.toUpperCase(), PASSWORD);
    assert.equal(signedIn.statusCode, 303);
    assert.equal(signedIn.headers.location, '/console/home');
    const home = await b.get('/console/home');
    assert.equal(home.statusCode, 200);
    assert.match(
      home.body,
      new RegExp(`href="/console/workspaces/${wsId}">Friends of the Park</a>\\s*\\(Owner\\)`),
    );
    const ws = await b.get(`/console/workspaces/${wsId}`);
    assert.equal(ws.statusCode, 200);
    assert.match(ws.body, new RegExp(`<code id="workspace-id"[^>]*>${wsId}</code>`));
    assert.match(ws.body, /<dd id="your-role">Owner<\/dd>/);
    assert.match(ws.body, /Pat Owner/);
    // The console is not part of the API's OpenAPI document.
    const doc = (await t.app.inject('/api/v1/openapi.json')).json<{ paths: Record<string, unknown> }>();
    assert.ok(!Object.keys(doc.paths).some((p) => p.startsWith('/console')));
  });

  test('an invitation link works once; an expired one is refused', async () => {
    const wsId = await workspace();
    const link = await invite(wsId, email('owner'));
    const b = browser();
    assert.equal((await b.accept(link, 'Once', PASSWORD)).statusCode, 303);
    const again = await b.get(new URL(link).pathname + new URL(link).search);
    assert.equal(again.statusCode, 410);
    assert.match(again.body, /already accepted/);

    const old = await invite(wsId, email('late'), 'owner', Date.now() - 24 * 60 * 60 * 1000 - 1000);
    const late = browser();
    assert.equal((await late.get(new URL(old).pathname + new URL(old).search)).statusCode, 410);
    const page = await late.get('/console/sign-in');
    const post = await late.post('/console/invitation', {
      _csrf: csrfOf(page.body),
      token: new URL(old).searchParams.get('token')!,
      displayName: 'Late',
      password: PASSWORD,
      confirm: PASSWORD,
    });
    assert.equal(post.statusCode, 410);
    assert.equal((await browser().get('/console/invitation?token=dxi_unknown')).statusCode, 410);
  });

  test('a short password or a mismatched confirmation is refused on the form', async () => {
    const link = await invite(await workspace(), email('owner'));
    const b = browser();
    const short = await b.accept(link, 'Shorty', 'short');
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /at least 12 characters/);
    const url = new URL(link);
    const page = await b.get(url.pathname + url.search);
    const mismatch = await b.post('/console/invitation', {
      _csrf: csrfOf(page.body),
      token: url.searchParams.get('token')!,
      displayName: 'X',
      password: PASSWORD,
      confirm: `${PASSWORD}!`,
    });
    assert.equal(mismatch.statusCode, 400);
    assert.match(mismatch.body, /not the same/);
  });

  test('an invitation to someone who has an account never replaces their password', async () => {
    const wsA = await workspace();
    const wsB = await workspace();
    const { address } = await member(wsA);
    // Whoever holds the link (here, the inviting owner of B) cannot set the person's password.
    const link = await invite(wsB, address, 'admin');
    const holder = browser();
    const url = new URL(link);
    const page = await holder.get(url.pathname + url.search);
    assert.match(page.body, /already have a console account/);
    assert.doesNotMatch(page.body, /name="confirm"/);
    assert.doesNotMatch(page.body, /type="password"/);
    const takeover = await holder.post('/console/invitation', {
      _csrf: csrfOf((await holder.get('/console/sign-in')).body),
      token: url.searchParams.get('token')!,
      displayName: 'Mallory',
      password: 'mallory chose this one',
      confirm: 'mallory chose this one',
    });
    assert.equal(takeover.statusCode, 403);
    assert.equal((await browser().signIn(address, 'mallory chose this one')).statusCode, 401);
    // The person themselves, signed in, accepts with one button and gains the second workspace.
    const own = browser();
    assert.equal((await own.signIn(address, PASSWORD)).statusCode, 303);
    const ownPage = await own.get(url.pathname + url.search);
    assert.doesNotMatch(ownPage.body, /type="password"/);
    const accepted = await own.post('/console/invitation', {
      _csrf: csrfOf(ownPage.body),
      token: url.searchParams.get('token')!,
    });
    assert.equal(accepted.statusCode, 303);
    const home = await own.get('/console/home');
    assert.match(home.body, new RegExp(`/console/workspaces/${wsB}"`));
    assert.match((await own.get(`/console/workspaces/${wsB}`)).body, /<dd id="your-role">Admin<\/dd>/);
  });

  test('a wrong password is refused and opens no session', async () => {
    const { address } = await member(await workspace());
    const b = browser();
    const res = await b.signIn(address, 'not the password at all');
    assert.equal(res.statusCode, 401);
    assert.match(res.body, /email or password is not right/);
    assert.ok(!b.cookies.has('dx_console'));
    assert.equal((await browser().signIn('nobody@example.org', PASSWORD)).statusCode, 401);
    assert.equal((await b.get('/console/home')).statusCode, 303);
  });

  test(`sign-in is refused (429) after ${SIGN_IN_MAX_FAILURES} failures per email+IP`, async () => {
    const { address } = await member(await workspace());
    const b = browser('198.51.100.7');
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++)
      assert.equal((await b.signIn(address, 'wrong password!')).statusCode, 401);
    const limited = await b.signIn(address, PASSWORD);
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.ok(!b.cookies.has('dx_console'));
    // The same person from another address is not locked out.
    assert.equal((await browser('198.51.100.8').signIn(address, PASSWORD)).statusCode, 303);
  });

  test('every form post needs the CSRF token of its own session', async () => {
    const wsId = await workspace();
    const { b } = await member(wsId);
    const form = { email: email('someone'), role: 'viewer' };
    const url = `/console/workspaces/${wsId}/invitations`;
    const missing = await b.post(url, form);
    assert.equal(missing.statusCode, 403);
    assert.match(missing.headers['content-type'] as string, /^text\/html/);
    assert.equal((await b.post(url, { ...form, _csrf: 'forged' })).statusCode, 403);
    // A valid token of another session does not do either.
    const other = await member(wsId);
    const theirs = csrfOf((await other.b.get(`/console/workspaces/${wsId}`)).body);
    assert.equal((await b.post(url, { ...form, _csrf: theirs })).statusCode, 403);
    // Sign-in and sign-out are forms too.
    assert.equal(
      (await browser().post('/console/sign-in', { email: 'a@b.c', password: PASSWORD })).statusCode,
      403,
    );
    assert.equal((await b.post('/console/sign-out', {})).statusCode, 403);
    // With its own token the post goes through.
    const ok = await b.post(url, {
      ...form,
      _csrf: csrfOf((await b.get(`/console/workspaces/${wsId}`)).body),
    });
    assert.equal(ok.statusCode, 201);
    assert.match(ok.body, /<code class="secret" id="invitation-link">[^<]*\/console\/invitation\?token=dxi_/);
  });

  test('the session cookie is HttpOnly, SameSite=Lax, scoped to /console; Secure behind HTTPS', async () => {
    const { address } = await member(await workspace());
    const res = await browser().signIn(address, PASSWORD);
    const cookie = res.cookies.find((c) => c.name === 'dx_console');
    assert.ok(cookie !== undefined);
    assert.equal(cookie.httpOnly, true);
    assert.equal(cookie.sameSite, 'Lax');
    assert.equal(cookie.path, '/console');
    assert.notEqual(cookie.secure, true);
    assert.match(cookie.value, /^dxs_/);
    // The database holds only the hash of the session id.
    const stored = await db().selectFrom('console_sessions').select('id_hash').execute();
    assert.ok(stored.every((s) => s.id_hash !== cookie.value && /^[0-9a-f]{64}$/.test(s.id_hash)));

    const https = await buildApp(
      { ...t.config, publicUrl: 'https://dx.example.org' },
      { ...t.services, metrics: new Registry() },
      { logger: false },
    );
    try {
      const b = new ConsoleBrowser(() => https);
      const secured = await b.signIn(address, PASSWORD);
      assert.equal(secured.statusCode, 303);
      assert.equal(secured.cookies.find((c) => c.name === 'dx_console')?.secure, true);
    } finally {
      await https.close();
    }
    const page = await browser().get('/console/sign-in');
    assert.match(page.headers['content-security-policy'] as string, /default-src 'none'/);
    // Scripts from the console itself only (its one enhancement script), none inline.
    assert.match(page.headers['content-security-policy'] as string, /script-src 'self';/);
    assert.match(page.body, /<script src="\/console\/console.js" defer><\/script>/);
    assert.equal(page.headers['referrer-policy'], 'no-referrer');
    assert.equal(page.headers['cache-control'], 'no-store');
  });

  test('sign-in gives a new session id (no fixation); the previous one stops working', async () => {
    const { b, address } = await member(await workspace());
    const first = b.cookies.get('dx_console')!;
    // An attacker plants a session id of their choosing: sign-in never adopts it.
    const victim = browser();
    victim.cookies.set('dx_console', 'dxs_planted-by-attacker');
    assert.equal((await victim.signIn(address, PASSWORD)).statusCode, 303);
    assert.notEqual(victim.cookies.get('dx_console'), 'dxs_planted-by-attacker');
    // Signing in again in a signed-in browser replaces its session: the old id stops working.
    const home = await b.get('/console/home');
    const again = await b.post('/console/sign-in', {
      _csrf: csrfOf(home.body),
      email: address,
      password: PASSWORD,
    });
    assert.equal(again.statusCode, 303);
    const second = b.cookies.get('dx_console')!;
    assert.notEqual(second, first);
    assert.equal((await b.get('/console/home')).statusCode, 200);
    const stale = new ConsoleBrowser(() => t.app);
    stale.cookies.set('dx_console', first);
    assert.equal((await stale.get('/console/home')).statusCode, 303);
  });

  test('sign-out ends the session; an idle session expires', async () => {
    const { b, address } = await member(await workspace());
    const token = b.cookies.get('dx_console')!;
    const home = await b.get('/console/home');
    const out = await b.post('/console/sign-out', { _csrf: csrfOf(home.body) });
    assert.equal(out.statusCode, 303);
    assert.equal(out.headers.location, '/console/sign-in');
    assert.ok(!b.cookies.has('dx_console'));
    const replay = new ConsoleBrowser(() => t.app);
    replay.cookies.set('dx_console', token);
    const res = await replay.get('/console/home');
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/console/sign-in');

    const idle = browser();
    assert.equal((await idle.signIn(address, PASSWORD)).statusCode, 303);
    await db()
      .updateTable('console_sessions')
      .set({ last_seen_ms: Date.now() - 31 * 60 * 1000 })
      .execute();
    assert.equal((await idle.get('/console/home')).statusCode, 303);
  });

  test('session lifetimes follow the configuration (CONSOLE_SESSION_MAX_HOURS)', async () => {
    const { b } = await member(await workspace());
    const idHash = hashSecret(b.cookies.get('dx_console')!);
    await db()
      .updateTable('console_sessions')
      .set({ created_ms: Date.now() - 2 * 3_600_000 })
      .where('id_hash', '=', idHash)
      .execute();
    assert.equal((await b.get('/console/home')).statusCode, 200); // 2 h old: within the default 12
    const saved = t.config.consoleSessions;
    t.config.consoleSessions = { ...saved, absoluteMs: 3_600_000 };
    try {
      const res = await b.get('/console/home');
      assert.equal(res.statusCode, 303);
      assert.equal(res.headers.location, '/console/sign-in');
    } finally {
      t.config.consoleSessions = saved;
    }
    // An expired session is gone for good, whatever the lifetime later.
    assert.equal((await b.get('/console/home')).statusCode, 303);
  });

  test('a viewer is offered no change and the server refuses one (403)', async () => {
    const wsId = await workspace();
    const owner = await member(wsId);
    const invitePage = await owner.b.get(`/console/workspaces/${wsId}`);
    const viewerEmail = email('viewer');
    const created = await owner.b.post(`/console/workspaces/${wsId}/invitations`, {
      _csrf: csrfOf(invitePage.body),
      email: viewerEmail,
      role: 'viewer',
    });
    assert.equal(created.statusCode, 201);
    const link = /id="invitation-link">([^<]+)</.exec(created.body)![1]!.replace(/&amp;/g, '&');
    const viewer = browser();
    assert.equal((await viewer.accept(link, 'Val Viewer', PASSWORD)).statusCode, 303);
    assert.equal((await viewer.signIn(viewerEmail, PASSWORD)).statusCode, 303);
    const page = await viewer.get(`/console/workspaces/${wsId}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<dd id="your-role">Viewer<\/dd>/);
    assert.doesNotMatch(page.body, /\/invitations"/);
    assert.doesNotMatch(page.body, /Recent activity/);
    const refused = await viewer.post(`/console/workspaces/${wsId}/invitations`, {
      _csrf: csrfOf(page.body),
      email: email('friend'),
      role: 'viewer',
    });
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /Not allowed/);
    // Someone else's workspace is not there at all.
    assert.equal((await viewer.get(`/console/workspaces/${await workspace()}`)).statusCode, 404);
  });

  test('the operator signs in and sees every workspace; names are escaped', async () => {
    const wsId = await workspace('<script>alert(1)</script>');
    const address = email('operator');
    const inv = await inviteOperator(db(), CLI_ACTOR, address);
    const b = browser();
    assert.equal(
      (await b.accept(invitationLink(t.config.publicUrl, inv.token), 'Op', PASSWORD)).statusCode,
      303,
    );
    assert.equal((await b.signIn(address, PASSWORD)).statusCode, 303);
    const home = await b.get('/console/home');
    assert.match(home.body, /All workspaces/);
    assert.match(home.body, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
    assert.doesNotMatch(home.body, /<script>/);
    const ws = await b.get(`/console/workspaces/${wsId}`);
    assert.match(ws.body, /<dd id="your-role">Operator<\/dd>/);
    assert.match(ws.body, /Recent activity/);
  });

  test('console actions are written to the audit log', async () => {
    const wsId = await workspace();
    const { b, address } = await member(wsId);
    await browser().signIn(address, 'wrong password!');
    await b.post('/console/sign-out', { _csrf: csrfOf((await b.get('/console/home')).body) });
    const rows = await db()
      .selectFrom('console_audit')
      .selectAll()
      .where('actor', 'in', [address, 'cli'])
      .orderBy('id')
      .execute();
    const mine = rows.filter((r) => r.actor === address || r.detail?.startsWith(address) === true);
    assert.deepEqual(
      mine.map((r) => r.action),
      [
        'owner.invited',
        'invitation.accepted',
        'session.signed_in',
        'session.sign_in_failed',
        'session.signed_out',
      ],
    );
    assert.equal(mine[0]!.workspace_id, wsId);
    assert.equal(mine[1]!.workspace_id, wsId);
    assert.ok(mine.every((r) => /^\d{4}-\d\d-\d\dT/.test(r.at)));
  });

  test('the stylesheet and script are served by the service; unknown console pages are an HTML 404', async () => {
    const css = await t.app.inject('/console/console.css');
    assert.equal(css.statusCode, 200);
    assert.match(css.headers['content-type'] as string, /^text\/css/);
    assert.match(css.body, /:focus-visible/);
    const js = await t.app.inject('/console/console.js');
    assert.equal(js.statusCode, 200);
    assert.match(js.headers['content-type'] as string, /^text\/javascript/);
    assert.equal(js.headers['cache-control'], 'public, max-age=3600');
    assert.match(js.body, /time\[datetime\]/);
    // It parses as a script (a syntax error would only show in a browser).
    assert.doesNotThrow(() => new Script(js.body));
    const missing = await t.app.inject('/console/nothing-here');
    assert.equal(missing.statusCode, 404);
    assert.match(missing.headers['content-type'] as string, /^text\/html/);
    const root = await t.app.inject('/console');
    assert.equal(root.statusCode, 303);
    assert.equal(root.headers.location, '/console/sign-in');
  });
});
