// A request body handed to code that streams it (an upload into the store). Such code ends the
// stream early when it refuses the body (over the size limit, a store failure), and destroying the
// request itself would destroy its socket: the refusal (a 413) could then never be answered. The
// body is therefore read through a stream of its own; the connection is closed after the answer
// (see sendProblem), not before it.
import type { IncomingMessage } from 'node:http';
import { PassThrough, type Readable } from 'node:stream';

/** The request's body as a stream that can be destroyed without destroying the connection. */
export function streamedBody(raw: IncomingMessage): Readable {
  const body = new PassThrough();
  raw.pipe(body);
  // A client that goes away mid-body still fails the stream (pipe() does not forward errors).
  raw.once('close', () => {
    if (!raw.complete) body.destroy(new Error('the client closed the connection before the body ended'));
  });
  body.once('close', () => raw.unpipe(body));
  return body;
}
