// "Last used" of proxy IDs: a call the proxy forwards records its ID's use (proxy_id_uses, migration
// 023), at most once a minute per ID and process; a refused call records nothing; the operator's
// page of proxy IDs shows the time, and "never" for an ID not used. A failing write is the unit
// test's (src/proxy/proxy-id-uses.test.ts): it never holds up or fails the request.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { proxyIdPrefix } from '../../src/domain/identity/proxy-ids.js';
import { proxyIdsPage } from '../../src/http/routes/console/pages-operator.js';
import { call, startStack, type Stack } from './stack.js';

void describe('proxy ID last use', () => {
  let s: Stack;
  before(async () => {
    s = await startStack();
  });
  after(async () => {
    await s.close();
  });

  const lastUse = async (prefix: string) =>
    (
      await s.database.db
        .selectFrom('proxy_id_uses')
        .select('last_used_at')
        .where('prefix', '=', prefix)
        .executeTakeFirst()
    )?.last_used_at;

  it('a forwarded call records the ID’s use once a minute; a refused one records nothing', async () => {
    const prefix = proxyIdPrefix(s.id);
    const unused = await s.store.create('never used');
    const before = Date.now();
    const first = await call(`${s.proxy.url}/v4/echoes`, { headers: s.headers });
    assert.equal(first.status, 200);
    // Written beside the request: it may land just after the answer.
    let at: string | undefined;
    for (let i = 0; i < 100 && at === undefined; i++) {
      at = await lastUse(prefix);
      if (at === undefined) await new Promise((r) => setTimeout(r, 20));
    }
    assert.ok(at !== undefined, 'no use recorded');
    const written = Date.parse(`${at}Z`);
    assert.ok(written >= before - 1000 && written <= Date.now() + 1000, at);

    // Within the minute: more calls write nothing more.
    for (let i = 0; i < 3; i++)
      assert.equal((await call(`${s.proxy.url}/v4/echoes`, { headers: s.headers })).status, 200);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await lastUse(prefix), at);

    // A call without credentials is refused by the proxy and not counted as a use of the ID.
    const refused = await call(`${s.proxy.url}/v4/echoes`, { headers: { 'x-proxyvid': unused.id } });
    assert.ok(refused.status >= 400 && refused.status < 500, String(refused.status));
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(await lastUse(unused.info.prefix), undefined);

    // The operator's page reads the same table.
    const page = proxyIdsPage({ csrf: 'x', signedInAs: null }, await s.store.list(), {
      notice: null,
      lastUses: await s.store.lastUses(),
    });
    assert.match(page, /Last used \(UTC\)/);
    const row = (p: string) => new RegExp(`<code>${p}</code>[\\s\\S]*?</tr>`).exec(page)?.[0] ?? '';
    assert.match(row(prefix), new RegExp(`<time datetime="${at.slice(0, 19)}`));
    assert.match(row(unused.info.prefix), /never/);
    // The secret itself is nowhere in the log.
    assert.ok(!JSON.stringify(s.logLines).includes(s.id));
  });
});
