// Named component schemas of the OpenAPI document (docs/api.md, "Writing a route").
//
// A schema made with component('Name', …) carries `$id: 'Name'`; buildApp adds every one of
// COMPONENTS (schemas/index.ts) with app.addSchema, and routes and other components use it through
// ref(), a `$ref: 'Name#'` that keeps the TypeBox static type. ajv (requests) and
// fast-json-stringify (answers) resolve the `$ref` to the same schema as before, so validation and
// answers are unchanged; @fastify/swagger renders it as `#/components/schemas/Name`.
// A component must never be embedded inline as well: ajv refuses two schemas with one `$id`.
import { Type, type Static, type TSchema } from 'typebox';
import {
  ERROR_CODES,
  ERROR_KINDS,
  PROBLEM_SOURCES,
  type ErrorCode,
  type ProblemSource,
} from '../../errors.js';

/** A schema with the component name it is registered under. */
export type Component<T extends TSchema = TSchema> = T & { $id: string };

/** Names `schema` as a component (an `$id`); list it in COMPONENTS so that it is registered. */
export function component<T extends TSchema>(name: string, schema: T): Component<T> {
  return Object.assign(schema, { $id: name });
}

/** A `$ref` to a component, typed as the component's static type. */
export function ref<T extends TSchema>(schema: Component<T>, options: { description?: string } = {}) {
  return Type.Unsafe<Static<T>>({ $ref: `${schema.$id}#`, ...options });
}

/** RFC 9457 problem-details, as every error of the service is rendered. */
export const Problem = component(
  'Problem',
  Type.Object(
    {
      type: Type.String({ description: 'A URI naming the kind of problem (the RFC section of the status)' }),
      title: Type.String({ description: 'The status text' }),
      status: Type.Integer({ description: 'The HTTP status' }),
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: Object.keys(ERROR_CODES),
        description:
          'What went wrong, stable and machine-readable (docs/api.md, "Error codes"); new codes may be added',
      }),
      detail: Type.String({ description: 'What went wrong and what to do, in words' }),
      errors: Type.Record(Type.String(), Type.Array(Type.String()), {
        description: 'Field path (or header name) → messages; empty unless the request was invalid',
      }),
      source: Type.Unsafe<ProblemSource>({
        type: 'string',
        enum: [...PROBLEM_SOURCES],
        description: 'The part of the system that answered: api, or proxy for its own errors',
      }),
      traceId: Type.String({ description: 'The request id (the x-request-id header of the answer)' }),
    },
    { description: 'application/problem+json (RFC 9457): every error answer of the service' },
  ),
);

/** The statuses a route may answer with a problem. */
export type ProblemStatus = 400 | 401 | 403 | 404 | 405 | 409 | 410 | 413 | 414 | 415 | 422 | 429 | 503;

const TITLE_OF_STATUS = Object.fromEntries(
  Object.values(ERROR_KINDS).map((k) => [k.status, k.title]),
) as Record<number, string>;

/**
 * Problem responses a route can answer, by status: `application/problem+json`, the Problem schema.
 * Every route can answer 400: a request without Host, or a path that is not valid percent-encoding.
 */
export function problems(...statuses: readonly ProblemStatus[]) {
  const response = (status: number) => ({
    description: TITLE_OF_STATUS[status] ?? 'Error',
    content: { 'application/problem+json': { schema: ref(Problem) } },
  });
  return Object.fromEntries(statuses.map((s) => [s, response(s)])) as Record<
    ProblemStatus,
    ReturnType<typeof response>
  >;
}

/** The problems every route with a JSON body can answer besides its own: bad JSON (400), too large
 * (413), not JSON (415). */
export const JSON_BODY_PROBLEMS = [400, 413, 415] as const;

/**
 * A query parameter that arrives as text and is checked as text (the schema's pattern; ajv does not
 * coerce), documented as the JSON Schema it denotes (`documentedAs`, e.g. an integer with its range).
 * openapi.ts puts `documentedAs` in the document in place of the string schema.
 */
export function queryText<T extends string = string>(
  schema: { pattern?: string; enum?: readonly T[] },
  documentedAs: Record<string, unknown> & { description: string },
) {
  const { enum: values, ...rest } = schema;
  return Type.Unsafe<T>({
    type: 'string',
    ...rest,
    ...(values !== undefined ? { enum: [...values] } : {}),
    description: documentedAs.description,
    [DOCUMENTED_AS]: documentedAs,
  });
}

/**
 * A request value of a closed set that the domain checks itself, so that its message can list the
 * choices: validated as text, documented as the enum it is (openapi.ts puts `documentedAs` in the
 * document), so generated clients refuse other values at compile time.
 */
export function checkedEnum(values: readonly string[], text: { minLength?: number; maxLength: number }) {
  const description = `One of ${values.join(', ')}`;
  return Type.Unsafe<string>({
    type: 'string',
    ...text,
    description,
    [DOCUMENTED_AS]: { type: 'string', enum: [...values], description },
  });
}

/** The keyword that carries a query parameter's documented schema (ajv treats it as an annotation). */
export const DOCUMENTED_AS = 'x-documented-as';

/** Why the signed-URL routes declare no security scheme (`security: []`). */
export const SIGNED_URL_SECURITY =
  'No Authorization header: the URL is the credential (its `expires` and `signature` query ' +
  'parameters, signed by the service); use it exactly as it was given.';
