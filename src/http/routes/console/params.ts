// Numbers in console paths and queries: a malformed one is a 404 (path) or a 400 (query), never a 500.
import { problem } from '../../../errors.js';

const ID = /^\d{1,15}$/;

/** A positive id from the path parameter `name`, or 404 with `notFound`. */
export function idParam(params: unknown, name: string, notFound: string): number {
  const raw = (params as Record<string, string | undefined>)[name] ?? '';
  const id = ID.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id < 1) throw problem('notFound', notFound);
  return id;
}

/** A positive id from the query parameter `name`; undefined when absent, 400 when malformed. */
export function optionalIdQuery(query: unknown, name: string): number | undefined {
  const raw = (query as Record<string, unknown> | undefined)?.[name];
  if (raw === undefined || raw === '') return undefined;
  const id = typeof raw === 'string' && ID.test(raw) ? Number(raw) : NaN;
  if (!Number.isSafeInteger(id) || id < 1)
    throw problem('invalid', `The page address is not valid (${name}).`);
  return id;
}

/** One value of a closed set from the query parameter `name`, or null. */
export function choiceQuery<K extends string>(
  query: unknown,
  name: string,
  choices: Record<K, unknown>,
): K | null {
  const raw = (query as Record<string, unknown> | undefined)?.[name];
  return typeof raw === 'string' && Object.hasOwn(choices, raw) ? (raw as K) : null;
}
