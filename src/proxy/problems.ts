// The proxy's own error answers, rendered from the shared error catalogue.
import { problem, toProblemBody, type ProblemError } from '../errors.js';
import type { ProxyIdHeader } from './headers.js';
import { connectionLines, httpDate, statusLine } from './wire.js';

/** 401: Authorization missing or malformed. */
export const missingAuthorization = (): ProblemError =>
  problem('unauthenticated', 'Requests must carry a valid Authorization header.', {
    code: 'authorization_missing',
    title: 'Missing Authorization Header',
  });

/** 400: X-PROXYVID (or X-MIGVID, as the caller named it) missing, unknown or revoked. */
export const invalidProxyId = (header: ProxyIdHeader): ProblemError =>
  problem('invalid', `Requests must carry a valid ${header} header.`, {
    title: `Invalid ${header} Header`,
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

/**
 * Renders `err` as a complete application/problem+json response (head and body in one buffer);
 * `keepAlive` false adds Connection: close. Returns the bytes and the body's length.
 */
export function renderProblem(
  err: ProblemError,
  traceId: string,
  keepAlive: boolean,
  keepAliveSeconds: number,
): { data: Buffer; bodyLength: number } {
  const body = JSON.stringify(toProblemBody(err, 'proxy', traceId));
  const bodyLength = Buffer.byteLength(body);
  let head =
    statusLine(err.status, null) +
    `content-type: application/problem+json\r\ncontent-length: ${bodyLength}\r\ncache-control: no-store\r\n` +
    `x-request-id: ${traceId}\r\n`;
  for (const [name, value] of Object.entries(err.headers)) head += `${name}: ${value}\r\n`;
  head += `Date: ${httpDate()}\r\n${connectionLines(keepAlive, keepAliveSeconds)}\r\n`;
  const data = Buffer.allocUnsafe(head.length + bodyLength);
  data.write(body, data.write(head, 0, 'latin1'), 'utf8');
  return { data, bodyLength };
}
