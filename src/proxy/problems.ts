// The proxy's own error answers (spec §7, DESIGN §6), rendered from the shared error catalogue.
import type { ServerResponse } from 'node:http';
import { problem, toProblemBody, type ProblemError } from '../errors.js';

/** spec §7: Authorization missing or malformed. */
export const missingAuthorization = (): ProblemError =>
  problem('unauthenticated', 'Requests must carry a valid Authorization header.', {
    title: 'Missing Authorization Header',
  });

/** spec §7: X-PROXYVID missing, unknown or revoked. */
export const invalidProxyId = (): ProblemError =>
  problem('invalid', 'Requests must carry a valid X-PROXYVID header.', {
    title: 'Invalid X-PROXYVID Header',
  });

/** The request body is larger than PROXY_BODY_LIMIT_BYTES. */
export const bodyTooLarge = (limit: number): ProblemError =>
  problem('tooLarge', `The request body exceeds the proxy's limit of ${limit} bytes.`);

/** The proxy ID sent more requests than its rate allows. */
export const rateLimited = (retryAfterSeconds: number): ProblemError =>
  problem('rateLimited', `Too many requests for this proxy ID; retry after ${retryAfterSeconds} s.`, {
    headers: { 'retry-after': String(retryAfterSeconds) },
  });

/** The upstream could not be reached or dropped the connection. */
export const upstreamUnreachable = (): ProblemError =>
  problem('badGateway', 'The upstream API could not be reached or closed the connection.');

/** The upstream did not answer in time. */
export const upstreamTimeout = (timeoutMs: number): ProblemError =>
  problem('gatewayTimeout', `The upstream API did not answer within ${timeoutMs} ms.`);

/** The request target is not a path (absolute-form or asterisk-form). */
export const unsupportedTarget = (): ProblemError =>
  problem('invalid', 'The request target must be a path beginning with "/".');

/** Sends `err` as application/problem+json (returns its byte length); `close` ends the connection. */
export function sendProblem(res: ServerResponse, err: ProblemError, traceId: string, close: boolean): number {
  const body = JSON.stringify(toProblemBody(err, 'proxy', traceId));
  const length = Buffer.byteLength(body);
  const headers: Record<string, string | number> = {
    'content-type': 'application/problem+json',
    'content-length': length,
    'cache-control': 'no-store',
    ...err.headers,
  };
  if (close) headers.connection = 'close';
  res.writeHead(err.status, headers);
  res.end(body);
  return length;
}
