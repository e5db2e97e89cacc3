// What the proxy's two state machines share: a move is allowed from a list of phases and leads to
// one. The exchange's moves are EXCHANGE_MOVES (exchange-phases.ts), an upstream connection's
// UPSTREAM_MOVES (upstream.ts).

/** One move: the phases it may be made from, and the phase it leads to. */
export interface MoveRule<P extends string> {
  readonly from: readonly P[];
  readonly to: P;
}

/**
 * The phase `rule` leads to from `phase`, or null when `phase` does not allow it. A plain loop
 * over a handful of phases: it runs several times per request.
 */
export function moveFrom<P extends string>(rule: MoveRule<P>, phase: P): P | null {
  const { from } = rule;
  for (let i = 0; i < from.length; i++) if (from[i] === phase) return rule.to;
  return null;
}

/**
 * Makes `rule` on `holder` (an exchange, a connection) if its phase allows it; false, and nothing
 * changes, otherwise.
 */
export function makeMove<P extends string>(holder: { phase: P }, rule: MoveRule<P>): boolean {
  const to = moveFrom(rule, holder.phase);
  if (to === null) return false;
  holder.phase = to;
  return true;
}
