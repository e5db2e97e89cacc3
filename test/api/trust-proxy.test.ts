// TRUST_PROXY: the client's address behind a reverse proxy. The console's sign-in limit counts per
// email and address; X-Forwarded-For decides that address only when the proxy is trusted, so a
// caller cannot dodge the limit with a header of its own, and people behind a trusted proxy are
// not all counted as one.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { ConsoleBrowser } from '../support/console-browser.js';
import { consoleDb } from '../../src/domain/console/db.js';
import { CLI_ACTOR } from '../../src/domain/console/audit.js';
import { createOperatorWithPassword } from '../../src/domain/console/people.js';
import { SIGN_IN_MAX_FAILURES } from '../../src/domain/console/sign-in.js';

const PASSWORD = 'correct horse battery staple';

await forEachDatabase('TRUST_PROXY', (target) => {
  let byAddress: Fixture;
  let byHops: Fixture;
  let plain: Fixture;
  before(async () => {
    [byAddress, byHops, plain] = await Promise.all([
      startFixture(target, { ROLES: 'api', TRUST_PROXY: '127.0.0.1' }),
      startFixture(target, { ROLES: 'api', TRUST_PROXY: '1' }),
      startFixture(target, { ROLES: 'api' }),
    ]);
  });
  after(async () => {
    await Promise.all([byAddress?.close(), byHops?.close(), plain?.close()]);
  });

  /** Fails the sign-in of a new account as many times as the limit allows, from `from`. */
  async function exhaust(t: Fixture, email: string, from: string) {
    await createOperatorWithPassword(consoleDb(t.database.db), CLI_ACTOR, email, PASSWORD);
    const b = new ConsoleBrowser(() => t.app, '127.0.0.1', { 'x-forwarded-for': from });
    for (let i = 0; i < SIGN_IN_MAX_FAILURES; i++)
      assert.equal((await b.signIn(email, 'wrong password!')).statusCode, 401);
    assert.equal((await b.signIn(email, PASSWORD)).statusCode, 429);
  }
  const signInFrom = (t: Fixture, email: string, from: string) =>
    new ConsoleBrowser(() => t.app, '127.0.0.1', { 'x-forwarded-for': from }).signIn(email, PASSWORD);

  test('behind a trusted proxy (by address or by hop count), the forwarded address is counted', async () => {
    for (const [t, email] of [
      [byAddress, 'ops.address@example.org'],
      [byHops, 'ops.hops@example.org'],
    ] as const) {
      await exhaust(t, email, '203.0.113.5');
      assert.equal((await signInFrom(t, email, '203.0.113.6')).statusCode, 303, email);
    }
  });

  test('without TRUST_PROXY, X-Forwarded-For is ignored: a new header does not lift the limit', async () => {
    await exhaust(plain, 'ops.plain@example.org', '203.0.113.5');
    assert.equal((await signInFrom(plain, 'ops.plain@example.org', '203.0.113.6')).statusCode, 429);
  });
});
