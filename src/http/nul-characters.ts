// NUL characters: no id, name or value of the service may hold one (PostgreSQL text cannot store
// it, and a NUL cut into an id is never a real one), so a request carrying one is refused whole
// before any handler sees it, the same way on every database.
import type { FastifyInstance } from 'fastify';
import { problem } from '../errors.js';

/** `\u0000` in JSON text, not preceded by an escaping backslash (`\\u0000` is a backslash and "u0000"). */
const JSON_NUL = /(?:^|[^\\])(?:\\\\)*\\u0000/;

/** Whether JSON text holds a NUL character (raw NUL is not valid JSON and fails to parse anyway). */
export function jsonHoldsNul(text: string): boolean {
  return text.includes('\\u0000') && JSON_NUL.test(text);
}

/** The 400 problem of a NUL character in the request body. */
export function nulInBody(): Error {
  return problem(
    'invalid',
    'The request body holds a NUL character (\\u0000), which no name or value may contain.',
  );
}

/** Refuses requests whose URL (path or query) holds a NUL character, encoded or not. */
export function refuseNulInUrls(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    const url = request.url;
    if (url.includes('\0') || /%00/i.test(url)) {
      throw problem(
        'invalid',
        'The request URL holds a NUL character (%00), which no id, name or value may contain.',
      );
    }
  });
}
