// Requests refused by the framework before any route or hook of ours runs: a path that is not
// valid percent-encoding, a path parameter over the router's length limit, an HTTP/1.1 request
// without Host. Fastify and node answer those in their own shapes (plain JSON, an empty body);
// these answer them as problems, like every other error of the API.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { problem } from '../errors.js';
import { asProblem, sendProblem } from './problems.js';

/** Fastify's `frameworkErrors` option: routing errors as problems. */
export function frameworkErrorHandler(err: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  switch (err.code) {
    case 'FST_ERR_BAD_URL':
      void sendProblem(
        reply,
        request,
        problem(
          'invalid',
          'The request path is not valid: a percent-escape (%xx) does not decode to UTF-8 text.',
        ),
      );
      return;
    case 'FST_ERR_MAX_PARAM_LENGTH':
      void sendProblem(
        reply,
        request,
        problem('uriTooLong', 'A path segment of the request is longer than the server accepts.'),
      );
      return;
    default:
      void sendProblem(reply, request, asProblem(err));
  }
}

/** Node's own check answers an HTTP/1.1 request without Host with a bare 400; it is turned off
 * (`requireHostHeader: false`) so that this hook answers the same refusal as a problem. */
export function requireHostHeader(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (
      request.raw.httpVersionMajor === 1 &&
      request.raw.httpVersionMinor >= 1 &&
      request.headers.host === undefined
    ) {
      throw problem('invalid', 'An HTTP/1.1 request must name the server in a Host header.');
    }
  });
}
