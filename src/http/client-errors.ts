// Requests node's HTTP parser refuses before any route sees them (headers too large, a malformed
// request line, a request that takes too long). Fastify's own handler logs the error with its
// `rawPacket`, the raw request bytes, credentials included; this one logs the parser's code only
// and answers a problem, as every other error of the API is answered.
import { randomUUID } from 'node:crypto';
import type { Duplex } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import { problem, toProblemBody, type ErrorKind } from '../errors.js';

/** The parser's codes with an answer of their own; any other is a 400. */
const ANSWER_OF_CODE: Record<string, { kind: ErrorKind; detail: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: { kind: 'requestTimeout', detail: 'The request was not received in time.' },
  HPE_HEADER_OVERFLOW: {
    kind: 'headersTooLarge',
    detail: 'The request headers are larger than the server accepts.',
  },
  HPE_URI_TOO_LONG: { kind: 'uriTooLong', detail: 'The request target is longer than the server accepts.' },
};
const MALFORMED = { kind: 'invalid', detail: 'The request is not valid HTTP.' } as const;

/** Fastify's `clientErrorHandler`: a problem answer, then the connection closes. */
export function clientErrorHandler(
  this: FastifyInstance,
  err: Error & { code?: string },
  socket: Duplex,
): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const answer = ANSWER_OF_CODE[err.code ?? ''] ?? MALFORMED;
  const traceId = randomUUID();
  // Never the error object: node attaches the raw request bytes to it.
  this.log.debug({ code: err.code, traceId }, 'request refused by the HTTP parser');
  if (socket.writable) {
    const p = problem(answer.kind, answer.detail);
    const body = JSON.stringify(toProblemBody(p, 'api', traceId));
    socket.write(
      `HTTP/1.1 ${p.status} ${p.title}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}
