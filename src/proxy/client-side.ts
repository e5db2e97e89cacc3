// The two sides of a proxied request as each sees the other: the exchange (forward.ts) answers on
// a client connection, and the connection (connection.ts) feeds the exchange what it parses. Each
// module depends on this contract only, never on the other's class.
import type { RequestHeaderScan } from './headers.js';

// Reasons to stop reading from the client (bits; the connection reads while none is set).
/** Pipelined requests wait for the one in flight. */
export const PAUSED_FOR_PIPELINE = 1;
/** The request body held while waiting for an upstream connection is full. */
export const PAUSED_FOR_HOLD = 2;
/** The upstream socket is not taking more of the request body. */
export const PAUSED_FOR_UPSTREAM = 4;

/**
 * What the previous request on a connection proved, so the next one sending the same values skips
 * the work: a keep-alive client sends the same credentials on every request. Only values that
 * passed are kept, each compared with `===` against what this same connection sent before (no
 * other caller's secret is ever compared with it).
 */
export class ConnectionMemo {
  /** The last Authorization value found well formed ('' when none). */
  authorization = '';
  /** The last proxy ID found active, its prefix, and the cache generation that said so. */
  proxyId = '';
  prefix = '';
  generation = -1;
}

/** What an exchange needs from the client connection it answers on. */
export interface ClientSide {
  /** What earlier requests on this connection proved. */
  readonly memo: ConnectionMemo;
  /** Writes to the client; false when its socket buffer is full (wait for `onClientDrain`). */
  write(data: string | Buffer): boolean;
  /** Writes several parts in one system call. */
  writeAll(parts: (string | Buffer)[]): boolean;
  /** Bytes written are still waiting to be sent (the buffers they were given in are in use). */
  readonly holdsWrites: boolean;
  /** Calls `done` once everything written so far has been sent (at once if nothing waits). */
  afterWrites(done: () => void): void;
  pauseReading(reason: number): void;
  resumeReading(reasons: number): void;
  destroy(): void;
  /** The exchange's response is complete (or it was given up); the next one may start. */
  exchangeDone(ex: ConnectionExchange): void;
}

/** What a client connection needs from the exchange of one request it read. */
export interface ConnectionExchange {
  readonly scan: RequestHeaderScan;
  /** The response ends the client connection (Connection: close). */
  readonly closeAfter: boolean;
  /** Response bytes were produced (a bare error status can no longer be sent instead). */
  readonly hasResponded: boolean;
  onRequestBody(chunk: Buffer): void;
  onRequestEnd(): void;
  /**
   * A request's whole body and its end at once. `body` is a view of the connection's read buffer,
   * valid during this call only: the exchange copies what it keeps.
   */
  onRequestWhole(body: Buffer): void;
  /** The client's socket takes writes again. */
  onClientDrain(): void;
  /** The request turned out malformed after its head: the connection answers `status` and closes. */
  clientError(status: number, code: string): void;
  /** The client connection closed. */
  abort(): void;
}
