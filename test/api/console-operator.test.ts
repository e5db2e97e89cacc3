// The operator's console pages through HTTP, on SQLite and PostgreSQL: apps and their keys (the
// private key shown once, then working against the API; a revoked key refused), workspaces and
// their owners' invitations, proxy IDs, the health counts, the audit rows, and 404 for everyone else.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, createPrivateKey, randomUUID } from 'node:crypto';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import {
  ConsoleBrowser,
  csrfOf,
  signedInMember,
  signedInOperator,
  unescapeHtml,
} from '../support/console-browser.js';
import { createWorkspace } from '../../src/domain/identity/workspaces.js';
import { createApp } from '../../src/domain/identity/apps.js';
import { connectInstallation } from '../../src/domain/identity/installations.js';
import { getWebhook } from '../../src/domain/webhooks/webhooks.js';
import { OPERATOR_LIST_PAGE } from '../../src/http/routes/console/pages-operator.js';
import { signAppJwt } from '../../src/domain/identity/app-jwt-signer.js';
import { SqlProxyIdStore } from '../../src/domain/identity/proxy-ids.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { CLI_ACTOR } from '../../src/domain/console/audit.js';
import { invitationLink, inviteMember } from '../../src/domain/console/people.js';
import { formatMicros } from '../../src/lib/time.js';
import { createServices } from '../../src/runtime/services.js';
import type { JobStatus } from '../../src/storage/db/tables.js';

const PASSWORD = 'correct horse battery staple';
const OP = '/console/operator';
let counter = 0;

/** The text of the element with `id` (escaped as the page has it, then unescaped). */
function textOf(page: string, id: string): string {
  const m = new RegExp(`<(\\w+)[^>]*id="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(page);
  if (m === null) throw new Error(`no element #${id} on the page:\n${page}`);
  return unescapeHtml(
    m[2]!
      .replace(/<[^>]*>/g, '')
      .replace(/\s+/g, ' ')
      .trim(),
  );
}

/** The private key of a result page's text box. */
function privateKeyOf(page: string): string {
  const m = /<textarea id="private-key"[^>]*>([\s\S]*?)<\/textarea>/.exec(page);
  if (m === null) throw new Error(`no private key on the page:\n${page}`);
  return unescapeHtml(m[1]!);
}

await forEachDatabase('console: operator pages', (target) => {
  let t: Fixture;
  let op: ConsoleBrowser;
  let opEmail: string;
  before(async () => {
    t = await startFixture(target, { ROLES: 'api' });
    opEmail = `ops.${++counter}@example.org`;
    op = await signedInOperator(t, opEmail);
  });
  after(() => t.close());

  const db = () => consoleDb(t.database.db);
  const browser = () => new ConsoleBrowser(() => t.app);

  /** The operator's audit rows of one action, oldest first. */
  const auditOf = (action: string) =>
    db()
      .selectFrom('console_audit')
      .selectAll()
      .where('action', '=', action)
      .where('actor', '=', opEmail)
      .orderBy('id')
      .execute();

  async function installationsWith(appId: string, privateKeyPem: string, kid: string) {
    const jwt = await signAppJwt({ appId, privateKeyPem, kid });
    return t.app.inject({
      method: 'GET',
      url: '/api/v1/apps/me/installations',
      headers: { authorization: `Bearer ${jwt}` },
    });
  }

  test('the operator creates an app: the private key works against the API and is shown only once', async () => {
    const home = await op.get('/console/home');
    assert.match(home.body, /href="\/console\/operator"/);
    const created = await op.submit(`${OP}/apps`, `${OP}/apps`, { name: 'Acme <Dialer>', alg: 'RS256' });
    assert.equal(created.statusCode, 201, created.body);
    assert.match(created.body, /App created: Acme &lt;Dialer&gt;/);
    const appId = textOf(created.body, 'app-id');
    const kid = textOf(created.body, 'kid');
    const installationId = Number(textOf(created.body, 'installation-id'));
    assert.match(textOf(created.body, 'workspace-key'), /^wsk_/);
    const pem = privateKeyOf(created.body);
    assert.match(pem, /^-----BEGIN PRIVATE KEY-----\n[\s\S]+-----END PRIVATE KEY-----\n$/);
    assert.equal(createPrivateKey(pem).asymmetricKeyType, 'rsa');

    // A JWT signed with the shown key lists the app's installations through the API.
    const listed = await installationsWith(appId, pem, kid);
    assert.equal(listed.statusCode, 200, listed.body);
    const data = listed.json<{ data: { installationId: number }[] }>().data;
    assert.deepEqual(
      data.map((i) => i.installationId),
      [installationId],
    );

    // The download button posts the key shown back and gets the same key as a file.
    const download = await op.post(`${OP}/private-key`, {
      _csrf: csrfOf(created.body),
      pem,
      file: `${appId}-${kid}`,
    });
    assert.equal(download.statusCode, 200);
    assert.equal(download.headers['content-type'], 'application/x-pem-file');
    assert.equal(download.headers['content-disposition'], `attachment; filename="${appId}-${kid}.pem"`);
    assert.equal(download.headers['cache-control'], 'no-store');
    assert.equal(download.body, pem);
    const junk = await op.post(`${OP}/private-key`, {
      _csrf: csrfOf(created.body),
      pem: '<script>',
      file: 'x',
    });
    assert.equal(junk.statusCode, 400);
    assert.match(junk.headers['content-type'] as string, /^text\/html/);

    // No other page shows it again, and the service stores only the public half.
    for (const url of [`${OP}/apps`, `${OP}/apps/${appId}`]) {
      const page = await op.get(url);
      assert.equal(page.statusCode, 200);
      assert.match(page.body, new RegExp(kid));
      assert.doesNotMatch(page.body, /PRIVATE KEY/);
    }
    const keys = await t.database.db.selectFrom('app_keys').selectAll().where('app_id', '=', appId).execute();
    assert.equal(keys.length, 1);
    assert.match(keys[0]!.public_key_pem, /BEGIN PUBLIC KEY/);

    const rows = await auditOf('app.created');
    assert.equal(rows.length, 1);
    assert.match(rows[0]!.detail ?? '', new RegExp(`${appId}.*${kid} RS256`));
    assert.doesNotMatch(rows[0]!.detail ?? '', /PRIVATE|wsk_/);
  });

  test('the operator adds a key and revokes the first; a JWT with the revoked kid gets 401', async () => {
    const created = await op.submit(`${OP}/apps`, `${OP}/apps`, { name: 'Rotating App', alg: 'ES256' });
    assert.equal(created.statusCode, 201);
    const appId = textOf(created.body, 'app-id');
    const oldKid = textOf(created.body, 'kid');
    const oldPem = privateKeyOf(created.body);
    assert.equal(createPrivateKey(oldPem).asymmetricKeyType, 'ec');

    const added = await op.submit(`${OP}/apps/${appId}`, `${OP}/apps/${appId}/keys`, { alg: 'RS256' });
    assert.equal(added.statusCode, 201, added.body);
    const newKid = textOf(added.body, 'kid');
    const newPem = privateKeyOf(added.body);
    assert.notEqual(newKid, oldKid);
    assert.equal((await installationsWith(appId, newPem, newKid)).statusCode, 200);
    assert.equal((await installationsWith(appId, oldPem, oldKid)).statusCode, 200);

    // Revoking asks first, and says what it does. Both keys signed a JWT just now; "last used" says so.
    const appPage = await op.get(`${OP}/apps/${appId}`);
    const lastUsed = (kid: string) =>
      new RegExp(
        `<code>${kid}</code><br />\\w+</td>\\s*<td><time[^>]*>[^<]+</time></td>\\s*<td><time[^>]*>[^<]+</time></td>`,
      );
    assert.match(appPage.body, lastUsed(oldKid));
    assert.match(appPage.body, lastUsed(newKid));
    assert.match(appPage.body, new RegExp(`href="${OP}/apps/${appId}/keys/${oldKid}/revoke"`));
    const confirm = await op.get(`${OP}/apps/${appId}/keys/${oldKid}/revoke`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /refuses app JWTs signed with this key/);
    const revoked = await op.post(`${OP}/apps/${appId}/keys/${oldKid}/revoke`, {
      _csrf: csrfOf(confirm.body),
    });
    assert.equal(revoked.statusCode, 303);
    assert.equal(revoked.headers.location, `${OP}/apps/${appId}?revoked=${oldKid}`);
    const after = await op.get(revoked.headers.location);
    assert.match(after.body, new RegExp(`Key ${oldKid} is revoked`));
    assert.doesNotMatch(after.body, new RegExp(`keys/${oldKid}/revoke`));

    assert.equal((await installationsWith(appId, oldPem, oldKid)).statusCode, 401);
    // The notice is shown only when true: a link naming an active key says nothing.
    assert.doesNotMatch((await op.get(`${OP}/apps/${appId}?revoked=${newKid}`)).body, /is revoked/);
    assert.equal((await installationsWith(appId, newPem, newKid)).statusCode, 200);

    // A second revocation, an unknown key and an unknown app are 404 pages, not 500s.
    const again = await op.post(`${OP}/apps/${appId}/keys/${oldKid}/revoke`, { _csrf: csrfOf(confirm.body) });
    assert.equal(again.statusCode, 404);
    assert.equal((await op.get(`${OP}/apps/${appId}/keys/${oldKid}/revoke`)).statusCode, 404);
    assert.equal((await op.get(`${OP}/apps/${randomUUID()}`)).statusCode, 404);
    assert.equal((await op.get(`${OP}/apps/not-an-id`)).statusCode, 404);

    assert.ok((await auditOf('app_key.added')).some((r) => r.detail?.includes(`key ${newKid} RS256`)));
    const revokes = (await auditOf('app_key.revoked')).filter((r) => r.detail?.includes(appId));
    assert.equal(revokes.length, 1);
    assert.match(revokes[0]!.detail ?? '', new RegExp(`key ${oldKid}$`));
  });

  test('the operator sees where an app is installed, and sets, replaces and removes its webhook', async () => {
    const created = await op.submit(`${OP}/apps`, `${OP}/apps`, { name: 'Hooked App', alg: 'ES256' });
    const appId = textOf(created.body, 'app-id');
    const { workspace: elsewhere } = await createWorkspace(t.database.db, {
      displayName: 'Lakeside Campaign',
      type: 'Campaign',
    });
    await connectInstallation(t.database.db, appId, elsewhere.id);
    const page = await op.get(`${OP}/apps/${appId}`);
    const installed = /<h2>Installed in<\/h2>([\s\S]*?)<h2>/.exec(page.body)![1]!;
    assert.match(installed, /\(its own\)/);
    assert.match(
      installed,
      new RegExp(`<a href="/console/workspaces/${elsewhere.id}">Lakeside Campaign</a>`),
    );
    assert.match(page.body, /id="webhook-none"/);
    assert.match(page.body, /<span class="hint">never<\/span>/, 'its key signed no JWT yet');
    // Renamed from its page.
    const renamed = await op.post(`${OP}/apps/${appId}/name`, {
      _csrf: csrfOf(page.body),
      name: 'Hooked App 2',
    });
    assert.equal(renamed.statusCode, 303);
    assert.match((await op.get(`${OP}/apps/${appId}`)).body, /<h1>Hooked App 2<\/h1>/);
    assert.ok((await auditOf('app.renamed')).some((r) => r.detail === `${appId}: Hooked App → Hooked App 2`));
    assert.equal(
      (await op.post(`${OP}/apps/${appId}/name`, { _csrf: csrfOf(page.body), name: '' })).statusCode,
      400,
    );

    const url = 'https://93.184.216.34/dx-hook';
    const set = await op.submit(`${OP}/apps/${appId}`, `${OP}/apps/${appId}/webhook`, {
      url,
      event: ['dataset.job.failed', 'dataset.job.expired'],
    });
    assert.equal(set.statusCode, 201, set.body);
    const secret = textOf(set.body, 'webhook-secret');
    assert.match(secret, /^whsec_/);
    const stored = await getWebhook(t.database.db, appId);
    assert.equal(stored.url, url);
    assert.deepEqual(stored.events, ['dataset.job.failed', 'dataset.job.expired']);
    const shown = await op.get(`${OP}/apps/${appId}`);
    assert.equal(textOf(shown.body, 'webhook-url'), url);
    assert.ok(!shown.body.includes(secret), 'the secret is shown once');

    // Refused: an address the service may not reach, no event ticked. Nothing changes.
    const internal = await op.submit(`${OP}/apps/${appId}`, `${OP}/apps/${appId}/webhook`, {
      url: 'http://127.0.0.1/hook',
      event: 'dataset.job.completed',
    });
    assert.equal(internal.statusCode, 400);
    assert.match(internal.body, /The webhook URL is refused/);
    const none = await op.submit(`${OP}/apps/${appId}`, `${OP}/apps/${appId}/webhook`, { url });
    assert.equal(none.statusCode, 400);
    assert.match(none.body, /name at least one event/);
    assert.deepEqual(await getWebhook(t.database.db, appId), stored);

    // Removing asks first.
    const confirm = await op.get(`${OP}/apps/${appId}/webhook/remove`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /stops POSTing events/);
    const removed = await op.post(`${OP}/apps/${appId}/webhook/remove`, { _csrf: csrfOf(confirm.body) });
    assert.equal(removed.statusCode, 303);
    assert.match((await op.get(removed.headers.location as string)).body, /The webhook is removed\./);
    await assert.rejects(getWebhook(t.database.db, appId), /no webhook/);
    assert.equal((await op.get(`${OP}/apps/${appId}/webhook/remove`)).statusCode, 404);

    const setRows = (await auditOf('app_webhook.set')).filter((r) => r.detail?.includes(appId));
    assert.equal(setRows.length, 1);
    assert.match(setRows[0]!.detail ?? '', /dataset\.job\.failed, dataset\.job\.expired$/);
    assert.equal((await auditOf('app_webhook.removed')).filter((r) => r.detail?.includes(appId)).length, 1);
  });

  test('the operator lists accounts, disables and enables one, and gives and takes back operator rights', async () => {
    const { workspace } = await createWorkspace(t.database.db, { displayName: 'Accounts Campaign' });
    const memberEmail = `member.${++counter}@example.org`;
    const member = await signedInMember(t, workspace.id, 'viewer', memberEmail, 'Mira Member');
    assert.equal((await member.get('/console/home')).statusCode, 200);

    // Found by email or by name, with its workspaces and rights.
    const list = await op.get(`${OP}/accounts?q=Mira`);
    assert.equal(list.statusCode, 200);
    const row = new RegExp(
      `${memberEmail.replace(/\./g, '\\.')}</span><br /><span class="hint">Mira Member</span></td>\\s*<td>1</td>\\s*<td>Member</td>\\s*<td>active</td>`,
    );
    assert.match(list.body, row);
    const table = /<table>[\s\S]*<\/table>/.exec(list.body)![0];
    assert.ok(!table.includes(opEmail), 'the search left the others out');
    const accountId = Number(new RegExp(`${OP}/accounts/(\\d+)/disable`).exec(list.body)![1]);

    // Disabled: its session ends at once, and signing in says why (to whoever knows the password).
    const disabled = await op.post(`${OP}/accounts/${accountId}/disable`, { _csrf: csrfOf(list.body) });
    assert.equal(disabled.statusCode, 303);
    assert.match((await op.get(disabled.headers.location as string)).body, /The account is disabled/);
    assert.equal((await member.get('/console/home')).statusCode, 303);
    const refused = await new ConsoleBrowser(() => t.app).signIn(memberEmail, PASSWORD);
    assert.equal(refused.statusCode, 403);
    assert.match(refused.body, /This account is disabled/);
    const wrong = await new ConsoleBrowser(() => t.app).signIn(memberEmail, 'not the password at all');
    assert.equal(wrong.statusCode, 401, 'a wrong password learns nothing of the account');
    assert.match((await op.get(`${OP}/accounts?q=Mira`)).body, /<td>disabled <time/);

    // Enabled again: it signs in.
    await op.post(`${OP}/accounts/${accountId}/enable`, { _csrf: csrfOf(list.body) });
    const again = new ConsoleBrowser(() => t.app);
    assert.equal((await again.signIn(memberEmail, PASSWORD)).statusCode, 303);

    // Operator rights: given, the pages open; taken back, they are 404 again on the next request.
    assert.equal((await again.get(OP)).statusCode, 404);
    await op.post(`${OP}/accounts/${accountId}/grant-operator`, { _csrf: csrfOf(list.body) });
    assert.equal((await again.get(OP)).statusCode, 200);
    await op.post(`${OP}/accounts/${accountId}/revoke-operator`, { _csrf: csrfOf(list.body) });
    assert.equal((await again.get(OP)).statusCode, 404);

    // Nobody disables their own account or takes back their own rights (409); an unknown change or
    // account is a 404; a member cannot reach any of it.
    const self = await op.get(`${OP}/accounts?q=${encodeURIComponent(opEmail)}`);
    assert.match(self.body, /your own account/);
    const ownId = (
      await db()
        .selectFrom('console_accounts')
        .select('id')
        .where('email', '=', opEmail)
        .executeTakeFirstOrThrow()
    ).id;
    assert.equal(
      (await op.post(`${OP}/accounts/${ownId}/disable`, { _csrf: csrfOf(list.body) })).statusCode,
      409,
    );
    assert.equal(
      (await op.post(`${OP}/accounts/${ownId}/revoke-operator`, { _csrf: csrfOf(list.body) })).statusCode,
      409,
    );
    assert.equal(
      (await op.post(`${OP}/accounts/${accountId}/delete`, { _csrf: csrfOf(list.body) })).statusCode,
      404,
    );
    assert.equal(
      (await op.post(`${OP}/accounts/999999999/disable`, { _csrf: csrfOf(list.body) })).statusCode,
      404,
    );
    const home = await again.get('/console/home');
    assert.equal(
      (await again.post(`${OP}/accounts/${ownId}/disable`, { _csrf: csrfOf(home.body) })).statusCode,
      404,
    );
    assert.equal((await again.get(`${OP}/accounts`)).statusCode, 404);

    const rows = async (action: string) =>
      (await auditOf(action)).filter((r) => r.detail === memberEmail).length;
    assert.deepEqual(
      [
        await rows('account.disabled'),
        await rows('account.enabled'),
        await rows('operator.granted'),
        await rows('operator.revoked'),
      ],
      [1, 1, 1, 1],
    );
  });

  test('bad input on the operator forms gets a 400 page', async () => {
    const page = await op.get(`${OP}/apps`);
    const csrf = csrfOf(page.body);
    const before = await t.database.db.selectFrom('apps').select('id').execute();
    for (const [url, form] of [
      [`${OP}/apps`, { name: '   ', alg: 'RS256' }],
      [`${OP}/apps`, { name: 'X', alg: 'HS256' }],
      [`${OP}/workspaces`, { name: 'X', type: 'Club' }],
      [`${OP}/workspaces`, { name: '', type: 'Campaign' }],
      [`${OP}/proxy-ids`, { name: ' ' }],
    ] as const) {
      const res = await op.post(url, { _csrf: csrf, ...form });
      assert.equal(res.statusCode, 400, `${url} ${JSON.stringify(form)}`);
      assert.match(res.body, /role="alert"|Please check the form/);
    }
    assert.equal((await t.database.db.selectFrom('apps').select('id').execute()).length, before.length);
  });

  test('the operator creates a workspace and invites its owner, who accepts and sees it', async () => {
    const list = await op.get(`${OP}/workspaces`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /<select id="type" name="type">/);
    const created = await op.post(`${OP}/workspaces`, {
      _csrf: csrfOf(list.body),
      name: 'Friends of the River',
      type: 'Campaign',
    });
    assert.equal(created.statusCode, 201, created.body);
    const wsId = Number(textOf(created.body, 'workspace-id'));
    const key = textOf(created.body, 'workspace-key');
    assert.match(key, /^wsk_/);
    const row = await t.database.db
      .selectFrom('workspaces')
      .selectAll()
      .where('id', '=', wsId)
      .executeTakeFirst();
    assert.equal(row?.display_name, 'Friends of the River');
    assert.equal(row?.type, 'Campaign');
    assert.notEqual(row?.key_hash, key);
    assert.doesNotMatch((await op.get(`${OP}/workspaces`)).body, new RegExp(key));

    // A bad email is answered on the form itself.
    const bad = await op.post(`${OP}/workspaces/${wsId}/owner-invitations`, {
      _csrf: csrfOf(created.body),
      email: 'not an email',
    });
    assert.equal(bad.statusCode, 400);
    assert.match(bad.body, /role="alert"[^>]*>Enter a valid email address/);

    const ownerEmail = `river.owner.${++counter}@example.org`;
    const invited = await op.post(`${OP}/workspaces/${wsId}/owner-invitations`, {
      _csrf: csrfOf(created.body),
      email: ownerEmail,
    });
    assert.equal(invited.statusCode, 201, invited.body);
    const link = textOf(invited.body, 'invitation-link');
    assert.ok(link.startsWith(`${t.config.publicUrl}/console/invitation?token=dxi_`), link);
    assert.match(invited.body, /works once, until/);

    const owner = browser();
    assert.equal((await owner.accept(link, 'River Owner', PASSWORD)).statusCode, 303);
    assert.equal((await owner.signIn(ownerEmail, PASSWORD)).statusCode, 303);
    const home = await owner.get('/console/home');
    assert.match(
      home.body,
      new RegExp(`href="/console/workspaces/${wsId}">Friends of the River</a>\\s*\\(Owner\\)`),
    );
    const ws = await owner.get(`/console/workspaces/${wsId}`);
    assert.equal(ws.statusCode, 200);
    assert.match(ws.body, /<dd id="your-role">Owner<\/dd>/);

    // The list shows the new owner; the invitation form of an existing workspace works too.
    const after = await op.get(`${OP}/workspaces`);
    assert.match(after.body, new RegExp(ownerEmail.replaceAll('.', '\\.')));
    const form = await op.get(`${OP}/workspaces/${wsId}/invite-owner`);
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<label for="email">/);
    assert.equal((await op.get(`${OP}/workspaces/999999/invite-owner`)).statusCode, 404);

    const made = await auditOf('workspace.created');
    assert.ok(made.some((r) => r.workspace_id === wsId && r.detail === 'Friends of the River (Campaign)'));
    const invites = (await auditOf('owner.invited')).filter((r) => r.workspace_id === wsId);
    assert.deepEqual(
      invites.map((r) => r.detail),
      [`${ownerEmail} as owner`],
    );
  });

  test("the operator's workspaces and apps page 50 at a time in name order and are found by name", async () => {
    const tag = `Zed ${++counter}`;
    for (let i = 0; i <= OPERATOR_LIST_PAGE; i++)
      await createWorkspace(t.database.db, { displayName: `${tag} list ${String(i).padStart(3, '0')}` });
    const named = (body: string) =>
      [...body.matchAll(/<a href="\/console\/workspaces\/\d+">([^<]*)<\/a>/g)].map((m) =>
        unescapeHtml(m[1] ?? ''),
      );
    const first = await op.get(`${OP}/workspaces?q=${encodeURIComponent(tag.toLowerCase())}`);
    assert.equal(first.statusCode, 200);
    assert.equal(named(first.body).length, OPERATOR_LIST_PAGE);
    assert.equal(named(first.body)[0], `${tag} list 000`);
    const next = /<a href="([^"]+)" rel="next"\s*>Next workspaces<\/a\s*>/.exec(first.body)?.[1];
    assert.ok(next !== undefined, 'the first page links to the next, keeping the search');
    const second = await op.get(unescapeHtml(next));
    assert.deepEqual(named(second.body), [`${tag} list ${String(OPERATOR_LIST_PAGE).padStart(3, '0')}`]);
    assert.match(second.body, /First workspaces<\/a>/);

    for (const name of [`${tag} Canvass`, `${tag.toUpperCase()} Survey`, 'Other app'])
      await createApp(t.database.db, { name, alg: 'ES256' });
    const apps = await op.get(`${OP}/apps?q=${encodeURIComponent(tag)}`);
    const appNames = [...apps.body.matchAll(/<a href="\/console\/operator\/apps\/[^"]+">([^<]*)<\/a>/g)]
      .map((m) => m[1])
      .sort();
    assert.deepEqual(appNames, [`${tag} Canvass`, `${tag.toUpperCase()} Survey`].sort());
    const none = await op.get(`${OP}/apps?q=${encodeURIComponent(`${tag} nothing`)}`);
    assert.match(none.body, /No apps whose name holds/);
    assert.equal((await op.get(`${OP}/workspaces?after=forged`)).statusCode, 400);
  });

  test('the operator creates a proxy ID (shown once, stored hashed) and revokes it', async () => {
    const created = await op.submit(`${OP}/proxy-ids`, `${OP}/proxy-ids`, { name: 'Acme Dialer' });
    assert.equal(created.statusCode, 201, created.body);
    const id = textOf(created.body, 'proxy-id');
    assert.match(id, /^pv_[A-Za-z0-9_-]{32}$/);
    const prefix = id.slice(0, 11);

    const list = await op.get(`${OP}/proxy-ids`);
    assert.match(list.body, new RegExp(`<code>${prefix}</code>`));
    assert.ok(!list.body.includes(id));
    const row = await t.database.db
      .selectFrom('proxy_ids')
      .selectAll()
      .where('prefix', '=', prefix)
      .executeTakeFirst();
    assert.equal(row?.id_hash, createHash('sha256').update(id).digest('hex'));
    assert.ok(!Object.values(row ?? {}).includes(id));
    const store = new SqlProxyIdStore(t.database.db);
    assert.ok((await store.active()).some((a) => a.prefix === prefix));

    const confirm = await op.get(`${OP}/proxy-ids/${prefix}/revoke`);
    assert.equal(confirm.statusCode, 200);
    assert.match(confirm.body, /Running proxies refuse it within 5 seconds/);
    const revoked = await op.post(`${OP}/proxy-ids/${prefix}/revoke`, { _csrf: csrfOf(confirm.body) });
    assert.equal(revoked.statusCode, 303);
    assert.equal(revoked.headers.location, `${OP}/proxy-ids?revoked=${prefix}`);
    assert.ok(!(await store.active()).some((a) => a.prefix === prefix));
    const after = await op.get(revoked.headers.location);
    assert.match(after.body, new RegExp(`Proxy ID ${prefix} is revoked`));
    assert.doesNotMatch(after.body, new RegExp(`proxy-ids/${prefix}/revoke`));
    // Revoking again changes nothing and logs nothing more; an unknown prefix is a 404.
    assert.equal(
      (await op.post(`${OP}/proxy-ids/${prefix}/revoke`, { _csrf: csrfOf(confirm.body) })).statusCode,
      303,
    );
    assert.equal((await op.get(`${OP}/proxy-ids/pv_AAAAAAAA/revoke`)).statusCode, 404);

    assert.deepEqual(
      (await auditOf('proxy_id.created')).map((r) => r.detail),
      [`${prefix} (Acme Dialer)`],
    );
    assert.deepEqual(
      (await auditOf('proxy_id.revoked')).map((r) => r.detail),
      [`${prefix} (Acme Dialer)`],
    );
  });

  test('the health page counts queued, running and recently failed jobs, and says how long the oldest has waited', async () => {
    const empty = await op.get(OP);
    assert.equal(empty.statusCode, 200);
    assert.equal(textOf(empty.body, 'jobs-queued'), '0');
    assert.equal(textOf(empty.body, 'jobs-oldest-queued'), 'no job waits for a worker');
    assert.equal(textOf(empty.body, 'database-engine'), target.name === 'sqlite' ? 'SQLite' : 'PostgreSQL');
    assert.match(textOf(empty.body, 'service-version'), /^\d+\.\d+\.\d+/);

    const datasetId = await t.defineDataset([{ name: 'id', type: 'string' }]);
    const dataset = await t.database.db
      .selectFrom('datasets')
      .selectAll()
      .where('id', '=', datasetId)
      .executeTakeFirstOrThrow();
    const stamp = (ago: number) => formatMicros(BigInt(Date.now() - ago) * 1000n);
    const job = (status: JobStatus, agoMs = 0) => ({
      id: randomUUID(),
      dataset_id: datasetId,
      workspace_id: dataset.workspace_id,
      job_type: 'uploadUrl' as const,
      mode: 'create' as const,
      status,
      attempts: 0,
      created_at: stamp(agoMs + 1000),
      updated_at: stamp(agoMs),
      created_by_user_id: dataset.created_by_user_id,
    });
    const hour = 60 * 60 * 1000;
    await t.database.db
      .insertInto('dataset_jobs')
      .values([
        job('Queued'),
        job('Queued'),
        job('Queued', 3 * hour),
        // Two workers hold live leases (one of them two loads); a third stopped renewing its own.
        { ...job('Running'), lease_owner: 'worker-1', lease_expires_at: Date.now() + hour },
        { ...job('Running'), lease_owner: 'worker-1', lease_expires_at: Date.now() + hour },
        { ...job('Running'), lease_owner: 'worker-2', lease_expires_at: Date.now() + hour },
        { ...job('Running'), lease_owner: 'worker-3', lease_expires_at: Date.now() - hour },
        job('Failed', hour),
        job('Failed', 23 * hour),
        job('Failed', 25 * hour), // older than a day: not counted
        job('Completed'),
        job('Created'),
      ])
      .execute();
    const page = await op.get(OP);
    assert.equal(textOf(page.body, 'jobs-queued'), '3');
    assert.equal(textOf(page.body, 'jobs-running'), '4');
    assert.equal(textOf(page.body, 'workers-busy'), '2');
    assert.match(textOf(page.body, 'jobs-lapsed'), /^1 \(their lease lapsed/);
    assert.equal(textOf(empty.body, 'jobs-lapsed'), '0');
    assert.equal(textOf(page.body, 'jobs-failed'), '2');
    // The job queued 3 hours ago has waited longest.
    assert.match(
      textOf(page.body, 'jobs-oldest-queued'),
      /^3 h 0 min, queued \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/,
    );
    // The same figures as the gauges of a worker's /metrics (an API-only process exports none).
    const worker = await createServices({ ...t.config, roles: ['worker'] }, t.database);
    const metrics = await worker.metrics.metrics();
    assert.match(metrics, /^dx_jobs_queued 3$/m);
    assert.match(metrics, /^dx_jobs_running 4$/m);
    assert.doesNotMatch((await t.app.inject('/metrics')).body, /dx_jobs_queued/);
  });

  test('anyone but the operator gets 404 for every operator page, GET and POST; nothing changes', async () => {
    const app = await op.submit(`${OP}/apps`, `${OP}/apps`, { name: 'Guarded', alg: 'RS256' });
    const appId = textOf(app.body, 'app-id');
    const kid = textOf(app.body, 'kid');
    const pem = privateKeyOf(app.body);
    const pid = textOf(
      (await op.submit(`${OP}/proxy-ids`, `${OP}/proxy-ids`, { name: 'Guarded' })).body,
      'proxy-id',
    );
    const prefix = pid.slice(0, 11);
    const { workspace } = await createWorkspace(t.database.db, { displayName: 'Member Land' });

    // An owner of a workspace: signed in, a member, but not the operator.
    const ownerEmail = `owner.${++counter}@example.org`;
    const inv = await inviteMember(db(), CLI_ACTOR, {
      workspaceId: workspace.id,
      email: ownerEmail,
      role: 'owner',
    });
    const member = browser();
    assert.equal(
      (await member.accept(invitationLink(t.config.publicUrl, inv.token), 'M', PASSWORD)).statusCode,
      303,
    );
    assert.equal((await member.signIn(ownerEmail, PASSWORD)).statusCode, 303);
    const home = await member.get('/console/home');
    assert.doesNotMatch(home.body, /\/console\/operator/);
    const csrf = csrfOf(home.body);

    const gets = [
      OP,
      `${OP}/apps`,
      `${OP}/apps/${appId}`,
      `${OP}/apps/${appId}/keys/${kid}/revoke`,
      `${OP}/workspaces`,
      `${OP}/workspaces/${workspace.id}/invite-owner`,
      `${OP}/proxy-ids`,
      `${OP}/proxy-ids/${prefix}/revoke`,
    ];
    for (const url of gets) {
      const res = await member.get(url);
      assert.equal(res.statusCode, 404, url);
      assert.match(res.body, /There is no console page at this address/);
    }
    const posts: [string, Record<string, string>][] = [
      [`${OP}/apps`, { name: 'Sneaky', alg: 'RS256' }],
      [`${OP}/apps/${appId}/keys`, { alg: 'RS256' }],
      [`${OP}/apps/${appId}/keys/${kid}/revoke`, {}],
      [`${OP}/private-key`, { pem, file: 'x' }],
      [`${OP}/workspaces`, { name: 'Sneaky', type: 'Campaign' }],
      [`${OP}/workspaces/${workspace.id}/owner-invitations`, { email: 'sneaky@example.org' }],
      [`${OP}/proxy-ids`, { name: 'Sneaky' }],
      [`${OP}/proxy-ids/${prefix}/revoke`, {}],
    ];
    const count = async () =>
      Promise.all(
        (['apps', 'app_keys', 'workspaces', 'proxy_ids', 'console_invitations'] as const).map(async (table) =>
          Number(
            (
              await db()
                .selectFrom(table)
                .select((eb) => eb.fn.countAll<number>().as('n'))
                .executeTakeFirstOrThrow()
            ).n,
          ),
        ),
      );
    const before = await count();
    for (const [url, form] of posts) {
      const res = await member.post(url, { _csrf: csrf, ...form });
      assert.equal(res.statusCode, 404, url);
      assert.doesNotMatch(res.body, /PRIVATE KEY/);
    }
    assert.deepEqual(await count(), before);
    assert.equal((await installationsWith(appId, pem, kid)).statusCode, 200);
    assert.ok((await new SqlProxyIdStore(t.database.db).active()).some((a) => a.prefix === prefix));

    // Without a session a page is the sign-in page's redirect, as everywhere in the console.
    const anonymous = await browser().get(`${OP}/apps`);
    assert.equal(anonymous.statusCode, 303);
    assert.equal(anonymous.headers.location, '/console/sign-in');
  });
});
