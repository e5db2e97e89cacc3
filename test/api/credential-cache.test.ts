// Each API process reuses what a credential resolved to while the identity epoch holds (migration
// 014, domain/identity/credential-cache.ts). A credential used (and so kept) before a change that
// decides what it stands for is refused on the very next request: in the process that kept it,
// and when another process (the CLI) made the change.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { forEachDatabase } from '../support/databases.js';
import { callApi, startFixture, type Fixture } from '../support/fixture.js';
import { accessToken, onboardApp, ownToken } from '../support/onboarding.js';
import { rotateWorkspaceKey } from '../../src/domain/identity/workspaces.js';
import { removeInstallation } from '../../src/domain/identity/installations.js';
import { revokeAppKey } from '../../src/domain/identity/apps.js';
import { readEpochs } from '../../src/domain/identity/credential-cache.js';
import { IDENTITY_TABLES } from '../../src/storage/db/migrations/014_identity_epoch.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'dx.js');

await forEachDatabase('credentials reused across requests', (target) => {
  let h: Fixture;
  before(async () => {
    h = await startFixture(target);
  });
  after(() => h.close());

  const datasets = (token: string) => callApi(h.baseUrl, token, 'GET', '/datasets');
  const installations = (jwt: string) => callApi(h.baseUrl, jwt, 'GET', '/apps/me/installations');

  void it('an access token used before its workspace key is rotated is refused after', async () => {
    const partner = await onboardApp(h, 'Rotating app', 'ES256');
    const token = await ownToken(h, partner);
    assert.equal((await datasets(token)).status, 200);
    assert.equal((await datasets(token)).status, 200);
    await rotateWorkspaceKey(h.database.db, partner.workspaceId, null);
    const refused = await datasets(token);
    assert.equal(refused.status, 401, refused.text);
  });

  void it('an access token used before its installation is removed is refused after', async () => {
    const partner = await onboardApp(h, 'Uninstalled app', 'ES256');
    const token = await ownToken(h, partner);
    assert.equal((await datasets(token)).status, 200);
    await removeInstallation(h.database.db, partner.installationId);
    assert.equal((await datasets(token)).status, 401);
  });

  void it('an app JWT and the access tokens it minted, used before its key is revoked, are refused after', async () => {
    const partner = await onboardApp(h, 'Revoked key app', 'ES256');
    const jwt = await partner.jwt();
    const token = await ownToken(h, partner);
    assert.equal((await installations(jwt)).status, 200);
    assert.equal((await installations(jwt)).status, 200);
    assert.equal((await datasets(token)).status, 200);
    await revokeAppKey(h.database.db, partner.app.id, partner.kid);
    const jwtRefused = await installations(jwt);
    assert.equal(jwtRefused.status, 401, jwtRefused.text);
    assert.match(jwtRefused.text, /No active key of this app matches the JWT/);
    const tokenRefused = await datasets(token);
    assert.equal(tokenRefused.status, 401);
    assert.match(tokenRefused.text, /app key that minted this access token has been revoked/);
  });

  void it('a mint after the workspace key is rotated checks the new key, not the one kept', async () => {
    const partner = await onboardApp(h, 'Re-keyed minting app', 'ES256');
    await ownToken(h, partner);
    await ownToken(h, partner);
    const rotated = await rotateWorkspaceKey(h.database.db, partner.workspaceId, null);
    assert.ok(rotated !== null);
    await assert.rejects(ownToken(h, partner), /clientToken failed: 403 .*workspace_key_mismatch/);
    const token = await accessToken(h, partner, partner.installationId, rotated.workspaceKey);
    assert.equal((await datasets(token)).status, 200);
  });

  void it("a JWT's first use records its key's last use, and moves no epoch (cached credentials stay)", async () => {
    const partner = await onboardApp(h, 'Last-use app', 'ES256');
    const lastUse = () =>
      h.database.db
        .selectFrom('app_key_uses')
        .select('last_used_at')
        .where('kid', '=', partner.kid)
        .executeTakeFirst();
    assert.equal(await lastUse(), undefined, 'never used yet');
    const before = await readEpochs(h.database.db);
    assert.equal((await installations(await partner.jwt())).status, 200);
    const first = await lastUse();
    assert.ok(first !== undefined && /^\d{4}-\d\d-\d\dT/.test(first.last_used_at));
    assert.deepEqual(await readEpochs(h.database.db), before);
  });

  void it('mints at once, each token committed before it is answered, each working', async () => {
    const partner = await onboardApp(h, 'Busy minting app', 'ES256');
    const countTokens = async () =>
      Number(
        (
          await h.database.db
            .selectFrom('access_tokens')
            .innerJoin('installations', 'installations.id', 'access_tokens.installation_id')
            .where('installations.id', '=', partner.installationId)
            .select((eb) => eb.fn.countAll().as('n'))
            .executeTakeFirstOrThrow()
        ).n,
      );
    const before = await countTokens();
    // Rows of one group differ (rights): each token must get its own row's values back.
    const rights = (i: number) => (i % 3 === 0 ? ['datasets:read'] : []);
    const tokens = await Promise.all(Array.from({ length: 40 }, (_, i) => ownToken(h, partner, rights(i))));
    assert.equal(new Set(tokens).size, 40);
    assert.equal((await countTokens()) - before, 40);
    const answers = await Promise.all(tokens.map((t) => datasets(t)));
    assert.deepEqual(
      answers.map((a) => a.status),
      tokens.map(() => 200),
    );
    const mine = await Promise.all(tokens.map((t) => callApi(h.baseUrl, t, 'GET', '/auth/me')));
    assert.deepEqual(
      mine.map((m) => (m.json as { permissions: string[] }).permissions),
      tokens.map((_, i) => (i % 3 === 0 ? ['datasets:read'] : ['datasets:read', 'datasets:write'])),
    );
    // Groups of other sizes after the first (the statement is kept per row count).
    for (const size of [1, 7, 40]) {
      const more = await Promise.all(Array.from({ length: size }, () => ownToken(h, partner)));
      const statuses = await Promise.all(more.map(async (t) => (await datasets(t)).status));
      assert.deepEqual(
        statuses,
        more.map(() => 200),
      );
    }
  });

  void it('a workspace key rotated by another process (the CLI) stops a token this process kept', async () => {
    const partner = await onboardApp(h, 'CLI-rotated app', 'ES256');
    const token = await ownToken(h, partner);
    assert.equal((await datasets(token)).status, 200);
    await run(process.execPath, [BIN, 'workspaces', 'rotate-key', String(partner.workspaceId)], {
      env: { ...process.env, ...h.processEnv },
    });
    assert.equal((await datasets(token)).status, 401);
  });

  void it('the epoch moves on every update or delete of an identity table that changed a row, not on inserts', async () => {
    const db = h.database.db;
    const partner = await onboardApp(h, 'Epoch app', 'ES256');
    await ownToken(h, partner);
    const moves = async (change: () => Promise<unknown>) => {
      const before = (await readEpochs(db)).identity;
      await change();
      return (await readEpochs(db)).identity > before;
    };
    assert.equal(await moves(() => onboardApp(h, 'Inserted app', 'ES256')), false, 'an insert');
    assert.equal(
      await moves(() => sql`delete from access_tokens where installation_id = ${-1}`.execute(db)),
      false,
      'a delete of no row',
    );
    for (const table of IDENTITY_TABLES) {
      // A no-op update of each table's rows: a changed row for the trigger all the same.
      assert.equal(
        await moves(() =>
          sql`update ${sql.table(table)} set ${sql.ref(firstColumn[table] ?? '')} = ${sql.ref(firstColumn[table] ?? '')}`.execute(
            db,
          ),
        ),
        true,
        `an update of ${table}`,
      );
    }
    assert.equal(
      await moves(() =>
        db.deleteFrom('access_tokens').where('installation_id', '=', partner.installationId).execute(),
      ),
      true,
      'a delete of tokens',
    );
  });
});

/** A column of each identity table that an update may set to itself. */
const firstColumn: Record<string, string> = {
  access_tokens: 'permissions',
  installations: 'created_at',
  workspaces: 'display_name',
  apps: 'name',
  users: 'display_name',
  app_keys: 'alg',
};
