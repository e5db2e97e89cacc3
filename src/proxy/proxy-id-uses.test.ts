import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ProxyIdUses } from './proxy-id-uses.js';

/** A logger that keeps its warn lines. */
function warnings() {
  const lines: { obj: Record<string, unknown>; msg: string }[] = [];
  return {
    lines,
    logger: { warn: (obj: Record<string, unknown>, msg: string) => void lines.push({ obj, msg }) },
  };
}

void describe('ProxyIdUses', () => {
  void it('writes an ID’s use at most once a minute, each ID on its own', async () => {
    let now = 0;
    const written: string[] = [];
    const { lines, logger } = warnings();
    const uses = new ProxyIdUses({ recordUse: async (p) => void written.push(p) }, logger as never, {
      now: () => now,
    });
    uses.note('pv_AAAAAAAA');
    uses.note('pv_AAAAAAAA');
    uses.note('pv_BBBBBBBB');
    now = 59_999;
    uses.note('pv_AAAAAAAA');
    await uses.flush();
    assert.deepEqual(written, ['pv_AAAAAAAA', 'pv_BBBBBBBB']);
    now = 60_000;
    uses.note('pv_AAAAAAAA');
    await uses.flush();
    assert.deepEqual(written, ['pv_AAAAAAAA', 'pv_BBBBBBBB', 'pv_AAAAAAAA']);
    assert.equal(lines.length, 0);
  });

  void it('never throws or waits for the write; a failure is a warning by prefix, tried again a minute later', async () => {
    let now = 0;
    let calls = 0;
    const { lines, logger } = warnings();
    let release: () => void = () => undefined;
    const slow = new Promise<void>((r) => (release = r));
    const failing = new ProxyIdUses(
      {
        recordUse: (prefix) => {
          calls++;
          if (calls === 1) return slow.then(() => Promise.reject(new Error(`database is down (${prefix})`)));
          throw new Error('synchronous failure');
        },
      },
      logger as never,
      { now: () => now },
    );
    // Returns at once although the write hangs.
    failing.note('pv_AAAAAAAA');
    failing.note('pv_AAAAAAAA');
    assert.equal(calls, 1);
    release();
    await failing.flush();
    assert.equal(lines.length, 1);
    assert.equal(lines[0]!.obj.proxyId, 'pv_AAAAAAAA');
    assert.match(lines[0]!.msg, /last use failed/);
    // Not retried per request: a minute later.
    failing.note('pv_AAAAAAAA');
    assert.equal(calls, 1);
    now = 60_000;
    assert.doesNotThrow(() => failing.note('pv_AAAAAAAA'));
    await failing.flush();
    assert.equal(calls, 2);
    assert.equal(lines.length, 2);
  });
});
