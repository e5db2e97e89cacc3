import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FAILURES_FOR_OUTAGE, SharedRateLimiter, type RateStore } from './shared-rate.js';

/** The store's buckets in memory, on the same clock as the processes (as the database's are). */
class FakeStore implements RateStore {
  readonly buckets = new Map<string, { tokens: number; at: number }>();
  down = false;
  reports = 0;

  settle(counts: ReadonlyMap<string, number>, rate: number, burst: number, wallMs: number) {
    if (this.down) return Promise.reject(new Error('connection refused'));
    this.reports++;
    const levels = new Map<string, number>();
    for (const [key, n] of counts) {
      const b = this.buckets.get(key) ?? { tokens: burst, at: wallMs };
      b.tokens = Math.min(burst, b.tokens + Math.max(0, wallMs - b.at) * (rate / 1000)) - n;
      b.at = Math.max(b.at, wallMs);
      this.buckets.set(key, b);
      levels.set(key, b.tokens);
    }
    return Promise.resolve(levels);
  }
}

function processes(n: number, store: FakeStore, clock: { now: number }, rate = 10, burst = 10) {
  const changes: boolean[][] = [];
  const limiters = Array.from({ length: n }, (_, i) => {
    changes.push([]);
    return new SharedRateLimiter({
      rate,
      burst,
      localShare: 0.5,
      syncMs: 100,
      store,
      now: () => clock.now,
      wallNow: () => clock.now,
      onSharedChange: (shared) => changes[i]?.push(shared),
    });
  });
  return { limiters, changes };
}

/** Sends `perStep` requests to each process every 10 ms for `ms`, syncing every 100 ms; counts 0s. */
async function drive(limiters: SharedRateLimiter[], clock: { now: number }, ms: number, perStep: number) {
  let admitted = 0;
  for (let t = 0; t < ms; t += 10) {
    clock.now += 10;
    for (const l of limiters) for (let i = 0; i < perStep; i++) if (l.take('a') === 0) admitted++;
    if (clock.now % 100 === 0) for (const l of limiters) await l.sync();
  }
  return admitted;
}

void describe('SharedRateLimiter', () => {
  void it('two processes together admit the shared rate, not twice it, and never over the bound', async () => {
    const store = new FakeStore();
    const clock = { now: 0 };
    const { limiters } = processes(2, store, clock);
    // 10 s at 10/s with a burst of 10: one bucket admits 110. The bound of the design adds
    // (N - 1) × (burst + rate × sync) = 1 × (10 + 1) once; per process alone it would be 220.
    const admitted = await drive(limiters, clock, 10_000, 5);
    assert.ok(admitted >= 100 && admitted <= 110 + 11, `admitted ${admitted}`);
    assert.ok(limiters.every((l) => l.shared));
  });

  void it('keeps a refused key at a wait that pays back the shared debt', async () => {
    const store = new FakeStore();
    const clock = { now: 0 };
    const { limiters } = processes(2, store, clock);
    const [a, b] = limiters as [SharedRateLimiter, SharedRateLimiter];
    for (let i = 0; i < 10; i++) assert.equal(a.take('a'), 0);
    for (let i = 0; i < 10; i++) assert.equal(b.take('a'), 0, 'b has not heard of a yet');
    await a.sync();
    await b.sync();
    assert.equal(store.buckets.get('a')?.tokens, -10);
    // b's bucket is now in debt: 11 tokens to earn at 10/s before the next request, so 2 s.
    assert.equal(b.take('a'), 2);
    assert.equal(a.take('a'), 1, 'a has not heard of b yet: its own empty bucket');
    await a.sync();
    assert.equal(a.take('a'), 2, 'a learns the debt at its next report');
    clock.now += 1100;
    assert.equal(a.take('a'), 0, 'paid back');
  });

  void it('falls back to its share of the rate while the store is unreachable, and back when it answers', async () => {
    const store = new FakeStore();
    const clock = { now: 0 };
    const { limiters, changes } = processes(1, store, clock);
    const l = limiters[0] as SharedRateLimiter;
    l.take('a');
    await l.sync();
    store.down = true;
    for (let i = 1; i < FAILURES_FOR_OUTAGE; i++) {
      l.take('a');
      await l.sync();
    }
    assert.equal(l.shared, true, 'a few failed reports are not an outage yet');
    l.take('a');
    await l.sync();
    assert.equal(l.shared, false);
    assert.deepEqual(changes[0], [false], 'told once');
    // Its own bucket, refilled at half the rate (localShare 0.5): 5/s.
    clock.now += 60_000;
    const admitted = await drive([l], clock, 10_000, 5);
    assert.ok(admitted >= 10 + 50 - 1 && admitted <= 10 + 50 + 1, `admitted ${admitted} alone`);
    assert.deepEqual(changes[0], [false], 'still once, however many reports failed');
    store.down = false;
    l.take('a');
    await l.sync();
    assert.equal(l.shared, true);
    assert.deepEqual(changes[0], [false, true]);
    // What it admitted during the outage was not charged to the shared bucket.
    assert.ok((store.buckets.get('a')?.tokens ?? -1) >= 0);
  });

  void it('counts requests admitted while a report is under way in the next report', async () => {
    const store = new FakeStore();
    const clock = { now: 0 };
    let release = (): void => undefined;
    const slow: RateStore = {
      settle: (c, r, b, w) =>
        new Promise((resolve) => {
          release = () => resolve(store.settle(c, r, b, w));
        }),
    };
    const l2 = new SharedRateLimiter({
      rate: 10,
      burst: 10,
      localShare: 1,
      syncMs: 100,
      store: slow,
      now: () => clock.now,
      wallNow: () => clock.now,
      onSharedChange: () => undefined,
    });
    l2.take('a');
    const first = l2.sync();
    l2.take('a');
    l2.take('a');
    release();
    await first;
    const second = l2.sync();
    release();
    await second;
    assert.equal(store.buckets.get('a')?.tokens, 10 - 3);
    assert.equal(store.reports, 2);
  });
});
