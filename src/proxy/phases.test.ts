// The two move tables describe lives that start and end: every phase is reached by some move from
// the first, and the last can be reached from every other; a move outside its phases is refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EXCHANGE_MOVES, HOLDS_UPSTREAM, type ExchangePhase } from './exchange-phases.js';
import { moveFrom, type MoveRule } from './phases.js';
import { UPSTREAM_MOVES, type UpstreamPhase } from './upstream.js';

/** The phases reachable from `start` through `moves`. */
function reachable<P extends string>(moves: Record<string, MoveRule<P>>, start: P): Set<P> {
  const seen = new Set<P>([start]);
  for (let grew = true; grew;) {
    grew = false;
    for (const rule of Object.values(moves))
      if (rule.from.some((p) => seen.has(p)) && !seen.has(rule.to)) {
        seen.add(rule.to);
        grew = true;
      }
  }
  return seen;
}

void describe('phase tables', () => {
  void it("an exchange can reach every phase from 'queued', and 'done' from every other", () => {
    const phases = Object.keys(HOLDS_UPSTREAM) as ExchangePhase[];
    assert.deepEqual([...reachable(EXCHANGE_MOVES, 'queued')].sort(), [...phases].sort());
    for (const phase of phases)
      assert.equal(moveFrom(EXCHANGE_MOVES.finish, phase), phase === 'done' ? null : 'done', phase);
  });

  void it("an upstream connection can reach every phase from 'connecting', and 'closed' from every other", () => {
    const phases: UpstreamPhase[] = ['connecting', 'busy', 'idle', 'closed'];
    assert.deepEqual([...reachable(UPSTREAM_MOVES, 'connecting')].sort(), [...phases].sort());
    for (const phase of phases)
      assert.equal(moveFrom(UPSTREAM_MOVES.closed, phase), phase === 'closed' ? null : 'closed', phase);
  });

  void it('refuses a move its phase does not allow', () => {
    assert.equal(moveFrom(EXCHANGE_MOVES.respond, 'responding'), null);
    assert.equal(moveFrom(EXCHANGE_MOVES.connected, 'checking'), null);
    assert.equal(moveFrom(EXCHANGE_MOVES.connected, 'awaitingUpstream'), 'requesting');
    assert.equal(moveFrom(UPSTREAM_MOVES.assigned, 'busy'), null);
  });
});
