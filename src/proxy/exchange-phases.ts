// The phases of one request's life in the proxy (an Exchange, forward.ts) and every move between
// them. The exchange changes phase only by one of these moves; a move its phase does not allow is
// refused, which is what guards against a late callback (an upstream answering an exchange whose
// client has gone, say) acting twice.
import type { MoveRule } from './phases.js';

/** Where an exchange is. */
export type ExchangePhase =
  /** Its head was read; it waits for the exchanges before it on the connection (pipelining). */
  | 'queued'
  /** Its turn came: the admission checks run (an unknown proxy ID may be looked up). */
  | 'checking'
  /** Admitted with a small body not read whole yet: it is sent with the head in one write. */
  | 'collecting'
  /** Waiting for an upstream connection from the pool. */
  | 'awaitingUpstream'
  /** An upstream connection writes the request; the response head has not come. */
  | 'requesting'
  /** Response bytes go to the client (the upstream's, or a problem of the proxy's own). */
  | 'responding'
  /** Logged and counted; nothing more happens. */
  | 'done';

/** Every move an exchange can make. */
export const EXCHANGE_MOVES = {
  /** Its turn on the connection came. */
  begin: { from: ['queued'], to: 'checking' },
  /** Admitted; its small body is read whole before it is sent. */
  collect: { from: ['checking'], to: 'collecting' },
  /** Admitted (or its body is whole): it asks the pool for a connection. */
  dispatch: { from: ['checking', 'collecting'], to: 'awaitingUpstream' },
  /** The pool gave it a connection. */
  connected: { from: ['awaitingUpstream'], to: 'requesting' },
  /** A reused connection was found closed before the request reached the upstream: once more. */
  retry: { from: ['requesting'], to: 'awaitingUpstream' },
  /** The response starts: the upstream's head, or the proxy's own problem. */
  respond: { from: ['checking', 'collecting', 'awaitingUpstream', 'requesting'], to: 'responding' },
  /** Complete, refused, failed or abandoned: it is logged and counted once. */
  finish: {
    from: ['queued', 'checking', 'collecting', 'awaitingUpstream', 'requesting', 'responding'],
    to: 'done',
  },
} as const satisfies Record<string, MoveRule<ExchangePhase>>;

/**
 * Whether the exchange uses the upstream side in `phase`: what giving it up must undo. Listed
 * for every phase, so a new one cannot be added without saying.
 */
export const HOLDS_UPSTREAM: Record<ExchangePhase, 'nothing' | 'poolQueue' | 'connection'> = {
  queued: 'nothing',
  checking: 'nothing',
  collecting: 'nothing',
  awaitingUpstream: 'poolQueue',
  requesting: 'connection',
  responding: 'connection',
  done: 'nothing',
};

/** Where request body bytes go. */
export type BodySink =
  /** Kept until an upstream connection takes them (pausing the client past a bound). */
  | 'hold'
  /** Written to the upstream connection as they come. */
  | 'upstream'
  /** Read and dropped (refused, failed, or answered before the body was complete). */
  | 'discard';
