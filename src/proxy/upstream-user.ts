// The two sides of an upstream connection in use: what the exchange it serves sees of it
// (UpstreamLink), and what the exchange implements to be served (UpstreamUser).
import type { Socket } from 'node:net';

/** What an exchange may do with the upstream connection it was given. */
export interface UpstreamLink {
  readonly socket: Socket;
  /** Writes request bytes; false when the socket buffer is full (wait for `onUpstreamDrain`). */
  write(data: string | Buffer): boolean;
  /** The request is completely written: from now on the upstream owes an answer. */
  sent(): void;
  /** Stops reading the response (the client reads slower than the upstream sends). */
  pause(): void;
  resume(): void;
  /**
   * Gives the connection back after a complete exchange: kept for the next request when
   * `reusable`, else closed. `keepAliveMs`: the upstream's idle timeout (-1 when not announced).
   */
  release(reusable: boolean, keepAliveMs: number): void;
  /** Closes it for good. */
  destroy(): void;
}

/** What an exchange implements to be served by an upstream connection. */
export interface UpstreamUser {
  /** HEAD: the response has headers only, whatever its framing headers say. */
  readonly headRequest: boolean;
  /** The pool assigns a connection; write the request on it. */
  onUpstream(conn: UpstreamLink): void;
  /** The final (non-1xx) response head. `keepAlive`: the upstream allows reuse after it. */
  onResponseHead(status: number, reason: string, headers: string[], keepAlive: boolean): void;
  /**
   * Body bytes, valid only until `onUpstreamFlush` returns when `inSharedReadBuffer(chunk)` (the
   * next read overwrites them); otherwise the connection does not reuse their memory while the
   * client has not taken everything written (see `onUpstreamFlush`).
   */
  onResponseBody(chunk: Buffer): void;
  /** The response is complete (call `release` or `destroy` on the connection from here). */
  onResponseEnd(): void;
  /**
   * One packet of the upstream was parsed: write out what it produced. Returns whether the client
   * still holds unsent bytes (body bytes handed over may still be read from their buffer).
   */
  onUpstreamFlush(): boolean;
  /** Calls `done` once the client has sent everything written to it so far. */
  whenClientSent(done: () => void): void;
  /** The upstream's socket can take more request body. */
  onUpstreamDrain(): void;
  /**
   * The connection failed before the response was complete. `timeout`: it went silent for too
   * long (or did not connect in time). `retryable`: it was a reused keep-alive connection that
   * failed before sending a byte (it was most likely closed by the upstream while idle).
   */
  onUpstreamError(code: string, timeout: boolean, retryable: boolean): void;
}
