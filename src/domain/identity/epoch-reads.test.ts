import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { SharedEpochReads } from './epoch-reads.js';
import type { Epochs } from './credential-cache.js';

/** Reads that return 1, 2, 3… as their identity epoch; `hold()` keeps the next one open. */
function countingReads() {
  let count = 0;
  let release: (() => void) | null = null;
  let held = false;
  return {
    reads: () => count,
    hold: () => {
      held = true;
    },
    release: () => {
      held = false;
      release?.();
    },
    read: async (): Promise<Epochs> => {
      const n = ++count;
      if (held) await new Promise<void>((resolve) => (release = resolve));
      return { identity: n, data: n };
    },
  };
}

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

void describe('SharedEpochReads', () => {
  void it('serves the callers of one turn of the event loop with one read', async () => {
    const r = countingReads();
    const shared = new SharedEpochReads(r.read);
    const all = await Promise.all([shared.epochs(), shared.epochs(), shared.epochs()]);
    assert.equal(r.reads(), 1);
    assert.deepEqual(
      all.map((e) => e.identity),
      [1, 1, 1],
    );
  });

  void it('never gives a caller a read that began before it called: it waits for the next', async () => {
    const r = countingReads();
    const shared = new SharedEpochReads(r.read);
    r.hold();
    const early = shared.epochs();
    await nextTurn();
    assert.equal(r.reads(), 1, 'the first read has begun');
    const late = [shared.epochs(), shared.epochs()];
    r.release();
    assert.equal((await early).identity, 1);
    assert.deepEqual(
      (await Promise.all(late)).map((e) => e.identity),
      [2, 2],
    );
    assert.equal(r.reads(), 2);
  });

  void it('fails the callers of a failed read only; the next read serves the next callers', async () => {
    let fail = true;
    let reads = 0;
    const shared = new SharedEpochReads(async () => {
      reads++;
      if (fail) throw new Error('database unreachable');
      return { identity: 7, data: 8 };
    });
    const failed = await Promise.allSettled([shared.epochs(), shared.epochs()]);
    assert.deepEqual(
      failed.map((o) => o.status),
      ['rejected', 'rejected'],
    );
    fail = false;
    assert.deepEqual(await shared.epochs(), { identity: 7, data: 8 });
    assert.equal(reads, 2);
  });
});
