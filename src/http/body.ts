// Request bodies: JSON only on JSON endpoints (any other media type is 415), and empty ones.
// Clients that send `Content-Type: application/json` on every request (DXAPI clients do) send it
// on body-less POSTs too: an empty body is "no body", never a JSON error; a route whose body is
// optional treats it as `{}`, and one that needs a body says what is missing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { problem } from '../errors.js';
import { jsonHoldsNul, nulInBody } from './nul-characters.js';

/** The detail of a 415 from a JSON endpoint. */
export const UNSUPPORTED_MEDIA_TYPE = 'The request Content-Type is not supported; send application/json.';

/** Replaces the JSON parser with one that reads an empty body as no body. */
export function acceptEmptyJsonBodies(app: FastifyInstance): void {
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    const text = body.toString();
    if (text === '') done(null, undefined);
    else if (jsonHoldsNul(text)) done(nulInBody(), undefined);
    // The default parser answers through `done`; its return value means nothing.
    else void parseJson(request, text, done);
  });
}

/** A JSON endpoint takes JSON only: a body of any other media type is 415, text/plain included
 * (Fastify's own text/plain parser would hand validation a string, a 400 "must be object"). An
 * empty body is no body whatever its type. Routes that read other types (uploads, the console's
 * forms) add their own parsers in their scopes. */
export function refuseNonJsonBodies(app: FastifyInstance): void {
  app.removeContentTypeParser('text/plain');
  app.addContentTypeParser('*', (request, _payload, done) => {
    const { 'content-length': length, 'transfer-encoding': chunked } = request.headers;
    if (length === '0' || (length === undefined && chunked === undefined)) done(null, undefined);
    else done(problem('unsupportedMediaType', UNSUPPORTED_MEDIA_TYPE), undefined);
  });
}

/** preValidation hook of a route whose body may be left out: no body reads as `{}`. */
export async function absentBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
