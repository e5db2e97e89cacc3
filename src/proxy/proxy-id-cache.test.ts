import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProxyIdCache } from './proxy-id-cache.js';
import { hashProxyId, proxyIdPrefix, type ActiveProxyId } from '../domain/identity/proxy-ids.js';

const ID_A = `pv_${'A'.repeat(32)}`;
const ID_B = `pv_${'B'.repeat(32)}`;
const entry = (id: string): ActiveProxyId => ({ hash: hashProxyId(id), prefix: proxyIdPrefix(id) });

void describe('ProxyIdCache', () => {
  void it('answers from memory; a miss reloads at most once per interval; malformed IDs never reload', async () => {
    let now = 0;
    let loads = 0;
    let rows = [entry(ID_A)];
    const cache = new ProxyIdCache(
      { active: async () => (loads++, rows) },
      { refreshMs: 60_000, missRefreshMs: 1000, now: () => now },
    );
    await cache.start();
    try {
      assert.equal(loads, 1);
      assert.equal(cache.lookup(ID_A), 'pv_AAAAAAAA');
      assert.equal(cache.lookup(ID_B), undefined);
      assert.equal(await cache.lookupOrRefresh('garbage'), undefined);
      assert.equal(loads, 1);
      rows = [entry(ID_A), entry(ID_B)];
      now = 5000;
      assert.equal(await cache.lookupOrRefresh(ID_B), 'pv_BBBBBBBB');
      assert.equal(loads, 2);
      rows = [entry(ID_A)];
      const unknown = `pv_${'C'.repeat(32)}`;
      now = 5500;
      assert.equal(await cache.lookupOrRefresh(unknown), undefined);
      assert.equal(loads, 2, 'within a second of the last miss-reload');
      now = 6100;
      assert.equal(await cache.lookupOrRefresh(unknown), undefined);
      assert.equal(loads, 3);
      assert.equal(cache.lookup(ID_B), undefined, 'the reload dropped the revoked ID');
    } finally {
      cache.stop();
    }
  });

  void it('keeps the previous set when a reload fails', async () => {
    let fail = false;
    const errors: unknown[] = [];
    const cache = new ProxyIdCache(
      {
        active: async () => {
          if (fail) throw new Error('database down');
          return [entry(ID_A)];
        },
      },
      { refreshMs: 60_000, onError: (e) => errors.push(e) },
    );
    await cache.start();
    cache.stop();
    fail = true;
    await assert.rejects(cache.refresh());
    assert.equal(errors.length, 1);
    assert.equal(cache.lookup(ID_A), 'pv_AAAAAAAA');
  });
});
