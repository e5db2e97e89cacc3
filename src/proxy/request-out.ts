// Writing a request's bytes to its upstream connection: body chunks as they come (re-framed as
// chunks when the client sent it chunked), or the head with the body held so far.
import type { UpstreamLink } from './upstream-user.js';
import { chunkHead, CRLF, LAST_CHUNK } from './wire.js';

/** Writes one piece of request body; false when the upstream's socket buffer is full. */
export function writeBodyChunk(up: UpstreamLink, chunk: Buffer, chunked: boolean): boolean {
  if (!chunked) return up.write(chunk);
  up.socket.cork();
  up.write(chunkHead(chunk.length));
  up.write(chunk);
  const ok = up.write(CRLF);
  up.socket.uncork();
  return ok;
}

/**
 * Writes the head and the body held so far in one system call; `ended`: that was the whole body
 * (a chunked one then gets its last chunk).
 */
export function writeHeadAndHeld(
  up: UpstreamLink,
  head: string,
  held: readonly Buffer[],
  chunked: boolean,
  ended: boolean,
): void {
  up.socket.cork();
  up.write(head);
  for (const chunk of held) {
    if (chunked) {
      up.write(chunkHead(chunk.length));
      up.write(chunk);
      up.write(CRLF);
    } else up.write(chunk);
  }
  if (ended && chunked) up.write(LAST_CHUNK);
  up.socket.uncork();
}

/**
 * The head and a small whole body as one string (the body as latin1, one character per byte):
 * one write, and cheaper than filling a Buffer from the head's string.
 */
export function wholeRequest(head: string, body: readonly Buffer[]): string {
  let data = head;
  for (const chunk of body) data += chunk.toString('latin1');
  return data;
}
