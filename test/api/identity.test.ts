// Installations, client tokens and /auth/me over HTTP, on SQLite and PostgreSQL.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import {
  accessToken,
  onboardApp,
  onboardWorkspace,
  ownToken,
  problemOf,
  type TestPartner,
} from '../support/onboarding.js';
import { removeInstallation } from '../../src/domain/identity/installations.js';
import { rotateWorkspaceKey } from '../../src/domain/identity/workspaces.js';
import { addAppKey, generateKeyPair, revokeAppKey } from '../../src/domain/identity/apps.js';
import { signAppJwt } from '../../src/domain/identity/app-jwt-signer.js';
import { nowSeconds } from '../../src/lib/time.js';
import { hashSecret } from '../../src/lib/secrets.js';
import { accessTokenKey } from '../../src/domain/identity/access-tokens.js';

const TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/;

await forEachDatabase('identity', (target) => {
  let t: Fixture;
  let partner: TestPartner;
  before(async () => {
    t = await startFixture(target);
    partner = await onboardApp(t, 'Texting Tool');
  });
  after(() => t.close());

  const get = async (url: string, bearer: string) =>
    t.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${bearer}` } });
  const post = async (url: string, bearer: string, payload: object) =>
    t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${bearer}` }, payload });

  test('an app lists its installations, its own included, in the public shape', async () => {
    const res = await get('/api/v1/apps/me/installations', await partner.jwt());
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.metadata.count, 1);
    const [inst] = body.data;
    assert.deepEqual(Object.keys(inst).sort(), [
      'createdBy',
      'dateCreated',
      'installationId',
      'movementAppId',
      'name',
      'platformAppId',
      'workspaceId',
    ]);
    assert.equal(inst.installationId, partner.installationId);
    assert.equal(inst.platformAppId, partner.app.id);
    assert.equal(inst.movementAppId, partner.app.id);
    assert.equal(inst.workspaceId, partner.workspaceId);
    assert.match(inst.dateCreated, TIMESTAMP);
    assert.deepEqual(Object.keys(inst.createdBy).sort(), ['displayName', 'email', 'userId']);
  });

  test('an app connects itself with a Workspace ID and Key, idempotently; a wrong key is 403', async () => {
    const other = await onboardWorkspace(t, 'Campaign A', []);
    const jwt = await partner.jwt();
    const bad = await post('/api/v1/apps/me/installations', jwt, {
      workspaceId: other.workspaceId,
      workspaceKey: 'wsk_wrong',
    });
    assert.equal(bad.statusCode, 403);
    assert.equal(problemOf(bad).status, 403);
    const first = await post('/api/v1/apps/me/installations', jwt, {
      workspaceId: other.workspaceId,
      workspaceKey: other.workspaceKey,
    });
    assert.equal(first.statusCode, 201);
    const again = await post('/api/v1/apps/me/installations', jwt, {
      workspaceId: other.workspaceId,
      workspaceKey: other.workspaceKey,
    });
    assert.equal(again.statusCode, 200);
    assert.equal(again.json().installationId, first.json().installationId);
    const list = await get('/api/v1/apps/me/installations', jwt);
    assert.equal(list.json().metadata.count, 2);
  });

  test('clientToken mints a bearer token that expires in an hour', async () => {
    const res = await post('/api/v1/auth/clientToken', await partner.jwt(), {
      tokenType: 'appInstallation',
      installationId: partner.installationId,
      workspaceKey: partner.workspaceKey,
      permissions: [],
    });
    assert.equal(res.statusCode, 200);
    const body = res.json();
    assert.equal(body.tokenType, 'Bearer');
    assert.match(body.expiresAt, TIMESTAMP);
    const lifetime = Date.parse(`${body.expiresAt}Z`) - Date.now();
    assert.ok(lifetime > 3590_000 && lifetime <= 3600_000, `lifetime ${lifetime}`);
    const me = await get('/api/v1/auth/me', body.token);
    assert.equal(me.statusCode, 200);
    assert.deepEqual(me.json().permissions, ['datasets:read', 'datasets:write']);
    assert.equal(me.json().platformAppId, partner.app.id);
    assert.equal(me.json().workspace.workspaceId, partner.workspaceId);
  });

  test('mints asked at once (150, then 3, 3 and 7) are all stored, and every token works', async () => {
    const jwt = await partner.jwt();
    const body = {
      tokenType: 'appInstallation',
      installationId: partner.installationId,
      workspaceKey: partner.workspaceKey,
    };
    const mintAtOnce = async (n: number) => {
      const answers = await Promise.all(
        Array.from({ length: n }, () => post('/api/v1/auth/clientToken', jwt, body)),
      );
      for (const a of answers) assert.equal(a.statusCode, 200, a.body);
      return answers.map((a) => a.json().token as string);
    };
    // Requests that arrive together are inserted in groups (group-insert.ts): here groups larger
    // than the statements PostgreSQL keeps prepared, and small ones of one size twice.
    const tokens = [
      ...(await mintAtOnce(150)),
      ...(await mintAtOnce(3)),
      ...(await mintAtOnce(3)),
      ...(await mintAtOnce(7)),
    ];
    assert.equal(new Set(tokens).size, 163);
    const rows = await t.database.db
      .selectFrom('access_tokens')
      .select('token_hash')
      .where('token_hash', 'in', tokens.map(accessTokenKey))
      .execute();
    assert.equal(rows.length, 163);
    for (const token of [tokens[0], tokens[149], tokens[150], tokens[162]]) {
      assert.equal((await get('/api/v1/auth/me', token as string)).statusCode, 200);
    }
  });

  test('a token minted by an earlier version (stored under its plain hash) still works', async () => {
    const minted = await accessToken(t, partner, partner.installationId, partner.workspaceKey);
    // Tokens now carry their mint time and are stored under a key led by it.
    assert.match(minted, /^dxt_[0-9a-f]{12}[A-Za-z0-9_-]{43}$/);
    assert.equal(accessTokenKey(minted).slice(0, 12), minted.slice(4, 16));
    const row = await t.database.db
      .selectFrom('access_tokens')
      .selectAll()
      .where('token_hash', '=', accessTokenKey(minted))
      .executeTakeFirstOrThrow();
    // The shape earlier versions minted: the prefix and 32 random bytes, stored under their SHA-256.
    const earlier = `dxt_${randomBytes(32).toString('base64url')}`;
    await t.database.db
      .insertInto('access_tokens')
      .values({ ...row, token_hash: hashSecret(earlier) })
      .execute();
    const me = await get('/api/v1/auth/me', earlier);
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().workspace.workspaceId, partner.workspaceId);
    // Its text with a time-like head is another token, unknown.
    const forged = `dxt_${minted.slice(4, 16)}${earlier.slice(4, 47)}`;
    assert.equal((await get('/api/v1/auth/me', forged)).statusCode, 401);
  });

  test('clientToken refuses: missing key 400, foreign installation 400, wrong key 403, unknown permission 400', async () => {
    const jwt = await partner.jwt();
    const stranger = await onboardApp(t, 'Stranger');
    const cases: [object, number, string?][] = [
      [{ tokenType: 'appInstallation', installationId: partner.installationId }, 400, 'workspaceKey'],
      [
        {
          tokenType: 'appInstallation',
          installationId: stranger.installationId,
          workspaceKey: stranger.workspaceKey,
        },
        400,
        'installationId',
      ],
      [
        { tokenType: 'appInstallation', installationId: 999999, workspaceKey: partner.workspaceKey },
        400,
        'installationId',
      ],
      [
        {
          tokenType: 'appInstallation',
          installationId: partner.installationId,
          workspaceKey: stranger.workspaceKey,
        },
        403,
      ],
      [
        {
          tokenType: 'appInstallation',
          installationId: partner.installationId,
          workspaceKey: partner.workspaceKey,
          permissions: ['admin'],
        },
        400,
        'permissions',
      ],
      [
        { tokenType: 'user', installationId: partner.installationId, workspaceKey: partner.workspaceKey },
        400,
        'tokenType',
      ],
    ];
    for (const [payload, status, field] of cases) {
      const res = await post('/api/v1/auth/clientToken', jwt, payload);
      assert.equal(res.statusCode, status, JSON.stringify(payload));
      const p = problemOf(res);
      assert.equal(p.source, 'api');
      if (field !== undefined) assert.ok(field in p.errors, `${field} in ${JSON.stringify(p.errors)}`);
    }
  });

  test('app JWTs that are expired, forged, too long-lived, of another algorithm or unknown issuer are 401', async () => {
    const url = '/api/v1/apps/me/installations';
    const now = nowSeconds();
    const forgedKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const forged = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: partner.kid })
      .setIssuer(partner.app.id)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(forgedKey);
    const hs = await new SignJWT({})
      .setProtectedHeader({ alg: 'HS256', kid: partner.kid })
      .setIssuer(partner.app.id)
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(new TextEncoder().encode('x'.repeat(32)));
    const unknownIssuer = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256' })
      .setIssuer('00000000-0000-0000-0000-000000000000')
      .setIssuedAt()
      .setExpirationTime('10m')
      .sign(forgedKey);
    const cases: [string, string][] = [
      ['expired', await partner.jwt({ issuedAt: now - 7200, ttlSeconds: 3600 })],
      ['too long-lived', await partner.jwt({ ttlSeconds: 7200 })],
      ['forged', forged],
      ['HS256', hs],
      ['unknown issuer', unknownIssuer],
      ['garbage', 'not.a.jwt'],
    ];
    for (const [name, jwt] of cases) {
      const res = await get(url, jwt);
      assert.equal(res.statusCode, 401, name);
      assert.equal(problemOf(res).type, 'https://tools.ietf.org/html/rfc9110#section-15.5.2', name);
    }
    const none = await t.app.inject({ method: 'GET', url });
    assert.equal(none.statusCode, 401);
    const basic = await t.app.inject({ method: 'GET', url, headers: { authorization: 'Basic abc' } });
    assert.equal(basic.statusCode, 401);
    // Clock skew of up to 60 s is tolerated.
    assert.equal(
      (await get(url, await partner.jwt({ issuedAt: now + 30, ttlSeconds: 600 }))).statusCode,
      200,
    );
    // A JWT dated ahead does not outlive the hour: iat (or nbf) beyond the leeway is refused,
    // naming the claim and the server time.
    const tenYears = 10 * 365 * 86400;
    const ahead = await get(url, await partner.jwt({ issuedAt: now + tenYears, ttlSeconds: 3600 }));
    assert.equal(ahead.statusCode, 401);
    assert.match(problemOf(ahead).detail, /claim iat .* lies in the future; the server time is \d+/);
    assert.equal(
      (await get(url, await partner.jwt({ issuedAt: now + 120, ttlSeconds: 600 }))).statusCode,
      401,
    );
    const notYet = await new SignJWT({})
      .setProtectedHeader({ alg: 'RS256', kid: partner.kid })
      .setIssuer(partner.app.id)
      .setIssuedAt(now)
      .setNotBefore(now + 600)
      .setExpirationTime(now + 1200)
      .sign(createPrivateKey(partner.privateKeyPem));
    const nbf = await get(url, notYet);
    assert.equal(nbf.statusCode, 401);
    assert.match(problemOf(nbf).detail, /claim nbf/);
  });

  test('an ES256 app works the same way', async () => {
    const es = await onboardApp(t, 'Dialer', 'ES256');
    const res = await get('/api/v1/apps/me/installations', await es.jwt());
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().data[0].platformAppId, es.app.id);
  });

  test('a revoked key stops verifying at once', async () => {
    const app2 = await onboardApp(t, 'Revoked');
    const jwt = await app2.jwt();
    assert.equal((await get('/api/v1/apps/me/installations', jwt)).statusCode, 200);
    await revokeAppKey(t.database.db, app2.app.id, app2.kid);
    assert.equal((await get('/api/v1/apps/me/installations', jwt)).statusCode, 401);
  });

  test('revoking an app key stops the access tokens its JWTs minted, nested ones included', async () => {
    const app5 = await onboardApp(t, 'Leaked Key');
    const second = await generateKeyPair('RS256');
    const key2 = await addAppKey(t.database.db, app5.app.id, 'RS256', second.publicKeyPem);
    const jwt2 = await signAppJwt({
      appId: app5.app.id,
      privateKeyPem: second.privateKeyPem,
      kid: key2.kid,
    });
    const fromKey1 = await ownToken(t, app5);
    const body = { installationId: app5.installationId, workspaceKey: app5.workspaceKey };
    const nested = (await post('/api/v1/auth/clientToken', fromKey1, body)).json().token;
    const fromKey2 = (await post('/api/v1/auth/clientToken', jwt2, body)).json().token;
    for (const token of [fromKey1, nested, fromKey2])
      assert.equal((await get('/api/v1/datasets', token)).statusCode, 200);

    await revokeAppKey(t.database.db, app5.app.id, app5.kid);
    for (const token of [fromKey1, nested]) {
      const refused = await get('/api/v1/datasets', token);
      assert.equal(refused.statusCode, 401);
      assert.match(problemOf(refused).detail, /app key that minted this access token has been revoked/);
    }
    assert.equal((await get('/api/v1/datasets', fromKey2)).statusCode, 200);
  });

  test('access tokens: an app JWT is not one, expired ones are 401, narrowed ones are 403 on writes', async () => {
    const jwt = await partner.jwt();
    assert.equal((await get('/api/v1/datasets', jwt)).statusCode, 401);
    const readOnly = await ownToken(t, partner, ['datasets:read']);
    assert.equal((await get('/api/v1/datasets', readOnly)).statusCode, 200);
    const write = await post('/api/v1/datasets', readOnly, {
      name: 'x',
      schema: { properties: [{ name: 'a', type: 'string' }] },
    });
    assert.equal(write.statusCode, 403);
    assert.equal(problemOf(write).type, 'https://tools.ietf.org/html/rfc9110#section-15.5.4');
    const token = await ownToken(t, partner);
    await t.database.db.updateTable('access_tokens').set({ expires_at: 1 }).execute();
    const expired = await get('/api/v1/datasets', token);
    assert.equal(expired.statusCode, 401);
    assert.match(problemOf(expired).detail, /expired/);
  });

  test('removing the installation or rotating the workspace key stops its tokens at once', async () => {
    const app3 = await onboardApp(t, 'Rotating');
    const ws = await onboardWorkspace(t, 'Campaign B', [app3]);
    const installationId = ws.installations.get(app3.app.id) ?? 0;
    const token = await accessToken(t, app3, installationId, ws.workspaceKey);
    assert.equal((await get('/api/v1/datasets', token)).statusCode, 200);
    await rotateWorkspaceKey(t.database.db, ws.workspaceId, null);
    assert.equal((await get('/api/v1/datasets', token)).statusCode, 401);

    const own = await ownToken(t, app3);
    assert.equal((await get('/api/v1/datasets', own)).statusCode, 200);
    await removeInstallation(t.database.db, app3.installationId);
    assert.equal((await get('/api/v1/datasets', own)).statusCode, 401);
  });

  test('/auth/me answers for an app JWT with the app and its own workspace', async () => {
    const res = await get('/api/v1/auth/me', await partner.jwt());
    assert.equal(res.statusCode, 200);
    const me = res.json();
    assert.equal(me.platformAppId, partner.app.id);
    assert.equal(me.workspace.workspaceId, partner.workspaceId);
    assert.equal(typeof me.userId, 'number');
  });
});
