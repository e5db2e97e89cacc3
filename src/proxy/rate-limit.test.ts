import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { RateLimiter } from './rate-limit.js';

void describe('RateLimiter', () => {
  void it('allows a burst, then refills at the rate, per key', () => {
    let now = 0;
    const limiter = new RateLimiter(2, 3, () => now);
    assert.deepEqual(
      [1, 2, 3].map(() => limiter.take('a')),
      [0, 0, 0],
    );
    assert.equal(limiter.take('a'), 1, 'empty: retry after 1 s');
    assert.equal(limiter.take('b'), 0, 'other keys have their own bucket');
    now += 500; // +1 token at 2/s
    assert.equal(limiter.take('a'), 0);
    assert.equal(limiter.take('a'), 1);
    now += 10_000; // refill caps at the burst
    assert.deepEqual(
      [1, 2, 3, 4].map(() => limiter.take('a')),
      [0, 0, 0, 1],
    );
  });

  void it('rounds Retry-After up to whole seconds for slow rates, and is off at rate 0', () => {
    let now = 0;
    const slow = new RateLimiter(0.1, 1, () => now);
    assert.equal(slow.take('a'), 0);
    assert.equal(slow.take('a'), 10);
    now += 5000;
    assert.equal(slow.take('a'), 5);
    const off = new RateLimiter(0, 0);
    assert.equal(off.enabled, false);
    for (let i = 0; i < 100; i++) assert.equal(off.take('a'), 0);
  });

  void it('takes a level from outside, debts included, and keeps what was earned when the rate changes', () => {
    let now = 0;
    const limiter = new RateLimiter(10, 10, () => now);
    limiter.set('a', -9, 0);
    assert.equal(limiter.take('a'), 1, '10 tokens to earn at 10/s');
    now += 1000;
    assert.equal(limiter.take('a'), 0);
    limiter.set('b', 50, now);
    assert.equal(limiter.level('b'), 10, 'never above the burst');
    limiter.set('c', 0, now);
    now += 500; // 5 tokens earned at 10/s
    limiter.setRate(1);
    now += 1000; // 1 more at 1/s
    assert.equal(limiter.level('c'), 6);
  });
});
