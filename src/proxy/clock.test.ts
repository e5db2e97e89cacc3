import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { holdTime, releaseTime, timeMs } from './clock.js';

/** Busy-waits until performance.now() has moved on by `ms`. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

void describe('proxy clock', () => {
  void it('holds one reading from holdTime to releaseTime, and reads anew outside', () => {
    const before = timeMs();
    spin(2);
    const fresh = timeMs();
    assert.ok(fresh - before >= 2, 'outside a read callback every call reads the clock');
    holdTime();
    try {
      const held = timeMs();
      assert.ok(held >= fresh);
      spin(2);
      assert.equal(timeMs(), held, 'inside, the same instant');
    } finally {
      releaseTime();
    }
    const after = timeMs();
    spin(2);
    assert.ok(timeMs() - after >= 2, 'released: reads anew');
  });

  void it('is monotonic milliseconds of performance.now()', () => {
    const a = performance.now();
    const t = timeMs();
    const b = performance.now();
    assert.ok(t >= a && t <= b);
  });
});
