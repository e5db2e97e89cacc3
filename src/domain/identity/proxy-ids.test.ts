// The proxy-ID store, run on a fresh SQLite file and on a PostgreSQL schema named after the test.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { ProblemError } from '../../errors.js';
import type { Database } from '../../storage/db/database.js';
import { forEachDatabase, type IsolatedDatabase } from '../../../test/support/databases.js';
import { ProxyIdCache } from '../../proxy/proxy-id-cache.js';
import { hashProxyId, looksLikeProxyId, proxyIdPrefix, SqlProxyIdStore } from './proxy-ids.js';

await forEachDatabase('proxy ID store', (target) => {
  let iso: IsolatedDatabase;
  let database: Database;
  let store: SqlProxyIdStore;

  before(async () => {
    iso = await target.create();
    database = iso.database;
    store = new SqlProxyIdStore(database.db);
  });
  after(() => iso.dispose());

  void it('creates an ID shown once, stored only as hash and prefix', async () => {
    const { id, info } = await store.create('  Acme Dialer  ');
    assert.ok(looksLikeProxyId(id), id);
    assert.equal(info.name, 'Acme Dialer');
    assert.equal(info.prefix, proxyIdPrefix(id));
    assert.equal(info.revokedAt, null);
    assert.match(info.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}$/);
    const rows = await database.db.selectFrom('proxy_ids').selectAll().execute();
    const row = rows.find((r) => r.prefix === info.prefix);
    assert.equal(row?.id_hash, hashProxyId(id));
    assert.ok(!JSON.stringify(rows).includes(id), 'the ID itself is never stored');
  });

  void it('refuses an empty name', async () => {
    await assert.rejects(
      store.create('   '),
      (err: unknown) => err instanceof ProblemError && err.status === 400,
    );
  });

  void it('lists, revokes by prefix or full ID, and stops listing revoked IDs as active', async () => {
    const a = await store.create('a');
    const b = await store.create('b');
    const active = await store.active();
    assert.ok(active.some((x) => x.prefix === a.info.prefix && x.hash === hashProxyId(a.id)));
    const revokedA = await store.revoke(a.info.prefix);
    assert.equal(revokedA.prefix, a.info.prefix);
    assert.notEqual(revokedA.revokedAt, null);
    const revokedB = await store.revoke(b.id);
    assert.equal(revokedB.prefix, b.info.prefix);
    // Idempotent: revoking again returns the same record.
    assert.deepEqual(await store.revoke(a.info.prefix), revokedA);
    const activePrefixes = (await store.active()).map((x) => x.prefix);
    assert.ok(!activePrefixes.includes(a.info.prefix) && !activePrefixes.includes(b.info.prefix));
    const all = await store.list();
    assert.ok(all.some((x) => x.prefix === a.info.prefix && x.revokedAt !== null));
    assert.ok(!(await store.list({ activeOnly: true })).some((x) => x.prefix === a.info.prefix));
  });

  void it('404 for an unknown ID or prefix', async () => {
    await assert.rejects(
      store.revoke('pv_unknown'),
      (err: unknown) => err instanceof ProblemError && err.status === 404,
    );
  });

  void it('feeds the in-memory cache that the proxy checks', async () => {
    const { id, info } = await store.create('cached');
    const cache = new ProxyIdCache(store, { refreshMs: 60_000 });
    await cache.start();
    try {
      assert.equal(cache.lookup(id), info.prefix);
      await store.revoke(id);
      assert.equal(cache.lookup(id), info.prefix, 'still active until the next reload');
      await cache.refresh();
      assert.equal(cache.lookup(id), undefined);
    } finally {
      cache.stop();
    }
  });
});
