// A request body handed to code that streams it (an upload into the store). Such code ends the
// stream early when it refuses the body (over the size limit, a store failure), and destroying the
// request itself would destroy its socket: the refusal (a 413) could then never be answered. The
// body is therefore read through a stream of its own; the connection is closed after the answer
// (see sendProblem), not before it.
//
// Code may also answer without reading the body at all (a resumable slice it does not store).
// A body left half read on a keep-alive connection stalls it, and the client's next request on it
// is reset: settleBody reads the rest before the answer, or has the answer close the connection.
import type { IncomingMessage } from 'node:http';
import { finished } from 'node:stream/promises';
import { PassThrough } from 'node:stream';
import type { FastifyReply } from 'fastify';

/** The request's body as a stream that can be destroyed without destroying the connection. */
export function streamedBody(raw: IncomingMessage): PassThrough {
  const body = new PassThrough();
  raw.pipe(body);
  // A client that goes away mid-body still fails the stream (pipe() does not forward errors).
  raw.once('close', () => {
    if (!raw.complete) body.destroy(new Error('the client closed the connection before the body ended'));
  });
  body.once('close', () => raw.unpipe(body));
  return body;
}

/**
 * Before a successful answer: reads and discards what is left of the body when it has all arrived
 * or its declared length is at most `drainLimit` bytes (the connection stays usable), or else
 * marks the answer `Connection: close` (a chunked or larger body is not worth reading to throw away).
 */
export async function settleBody(
  raw: IncomingMessage,
  body: PassThrough,
  reply: FastifyReply,
  drainLimit: number,
): Promise<void> {
  if (raw.readableEnded) return;
  const declared = raw.headers['content-length'];
  const length = declared === undefined ? null : Number(declared);
  const small = length !== null && Number.isSafeInteger(length) && length <= drainLimit;
  if (!raw.complete && !small) {
    void reply.header('connection', 'close');
    return;
  }
  raw.unpipe(body);
  body.destroy();
  raw.resume();
  try {
    await finished(raw);
  } catch {
    // The client went away mid-body: there is no connection left to keep.
    void reply.header('connection', 'close');
  }
}
