// The shared buckets' statement on a fresh SQLite file and on a PostgreSQL schema: refill up to the
// burst, charge, debts, a clock that is behind, and many keys at once.
import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { forEachDatabase, type IsolatedDatabase } from '../../test/support/databases.js';
import { openRateStore, type ClosableRateStore } from './shared-rate-store.js';

const RATE = 10;
const BURST = 5;

await forEachDatabase('shared rate buckets', (target) => {
  let iso: IsolatedDatabase;
  let store: ClosableRateStore;
  before(async () => {
    iso = await target.create();
    store = openRateStore(iso.database);
  });
  after(async () => {
    store.close();
    await iso.dispose();
  });

  const settle = (counts: Record<string, number>, wallMs: number) =>
    store.settle(new Map(Object.entries(counts)), RATE, BURST, wallMs);

  void it('starts full, charges, refills at the rate up to the burst, and keeps debts', async () => {
    assert.deepEqual(await settle({ a: 2 }, 1000), new Map([['a', 3]]));
    assert.deepEqual(await settle({ a: 7 }, 1000), new Map([['a', -4]]), 'a debt');
    // 300 ms at 10/s: 3 tokens.
    assert.deepEqual(await settle({ a: 0 }, 1300), new Map([['a', -1]]));
    assert.deepEqual(await settle({ a: 1 }, 60_000), new Map([['a', BURST - 1]]), 'never above the burst');
    const row = await iso.database.db.selectFrom('proxy_rate_buckets').selectAll().execute();
    assert.deepEqual(row, [{ proxy_id: 'a', tokens: BURST - 1, refilled_at: 60_000 }]);
  });

  void it('refills nothing for a clock that is behind, and does not move the last refill back', async () => {
    await settle({ b: BURST }, 5000);
    assert.deepEqual(await settle({ b: 0 }, 4000), new Map([['b', 0]]));
    assert.deepEqual(await settle({ b: 0 }, 5100), new Map([['b', 1]]));
  });

  void it('settles many keys in one report', async () => {
    const counts = Object.fromEntries(Array.from({ length: 1200 }, (_, i) => [`k${i}`, i % 3]));
    const levels = await settle(counts, 1000);
    assert.equal(levels.size, 1200);
    for (let i = 0; i < 1200; i++) assert.equal(levels.get(`k${i}`), BURST - (i % 3));
  });
});
