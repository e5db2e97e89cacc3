// Empty request bodies. Clients that send `Content-Type: application/json` on every request (DXAPI
// clients do) send it on body-less POSTs too: an empty body is "no body", never a JSON error; a
// route whose body is optional treats it as `{}`, and one that needs a body says what is missing.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { jsonHoldsNul, nulInBody } from './nul-characters.js';

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

/** preValidation hook of a route whose body may be left out: no body reads as `{}`. */
export async function absentBodyIsEmptyObject(request: FastifyRequest): Promise<void> {
  if (request.body === undefined || request.body === null) request.body = {};
}
