// The OpenAPI document as a contract on every answer the interface suites receive: each Fastify
// instance created in a test process (the service the fixture starts, or an app a test builds)
// gets an onSend hook, through Fastify's `fastify.initialization` diagnostics channel, that holds
// each answer to the instance's own /api/v1/openapi.json: the operation and status are declared,
// the media type is one the status declares (none when there is no body), and a JSON body matches
// the schema (ajv, JSON Schema 2020-12 as in OpenAPI 3.1). Violations are collected and fail the
// test file at its end (a root `after` hook), with the request named.
//
// Not covered: answers written by node's HTTP parser (client-errors.ts) and by other processes
// (CLI tests start `dx serve` as a child). DX_CONTRACT_CHECK=0 turns the check off.
import { subscribe } from 'node:diagnostics_channel';
import { after } from 'node:test';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';

// ajv-formats is CommonJS: its default export is the function itself under node's ESM loader.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

/** Routes that tests add to an app themselves: not part of the service, not in the document. */
const TEST_ONLY_ROUTES = new Set(['GET /boom']);

interface MediaType {
  schema?: unknown;
}
interface Response {
  content?: Record<string, MediaType>;
}
interface Operation {
  responses?: Record<string, Response>;
}
interface OpenApi {
  paths?: Record<string, Record<string, Operation | undefined> | undefined>;
}

const violations: string[] = [];
let checked = 0;

/** The checker of one document: compiled validators by JSON pointer. */
/** The statuses of an answer no route gave. */
const UNROUTED = new Set([400, 404, 414]);

class Contract {
  private readonly ajv = new Ajv2020({ strict: false, allErrors: true, validateSchema: false });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: OpenApi) {
    addFormats(this.ajv);
    this.ajv.addSchema(doc, 'openapi.json');
  }

  /** Why an answer breaks the document, or null. */
  check(method: string, routeUrl: string | undefined, status: number, contentType: string, payload: unknown) {
    if (routeUrl === undefined) {
      // No route: the not-found handler (404), or the router's refusal of a path it cannot read
      // (400: a bad percent-escape, a NUL; 414), a problem whatever the path.
      return this.checkBody('/components/schemas/Problem', UNROUTED.has(status) ? null : `status ${status}`, {
        contentType,
        payload,
        expected: ['application/problem+json'],
      });
    }
    const path = openApiPath(routeUrl);
    const verb = method === 'HEAD' ? 'get' : method.toLowerCase();
    const operation = this.doc.paths?.[path]?.[verb];
    if (operation === undefined) return `${verb.toUpperCase()} ${path} is not in the document`;
    const responses = operation.responses ?? {};
    const code = String(status);
    const key = code in responses ? code : `${code[0]}XX` in responses ? `${code[0]}XX` : 'default';
    const response = responses[key];
    if (response === undefined) {
      return `status ${code} is not declared (declared: ${Object.keys(responses).join(', ')})`;
    }
    // 204 and 304 answers carry no body on the wire, whatever was passed to send().
    const empty =
      status === 204 ||
      status === 304 ||
      payload === null ||
      payload === undefined ||
      payload === '' ||
      isEmptyBuffer(payload);
    if (response.content === undefined) {
      return empty ? null : `status ${code} declares no body, but one was sent (${contentType})`;
    }
    const mediaType = mediaTypeOf(contentType);
    if (!(mediaType in response.content)) {
      return `media type "${mediaType}" is not declared for ${code} (declared: ${Object.keys(response.content).join(', ')})`;
    }
    if (method === 'HEAD') return null;
    const pointer = `/paths/${escape(path)}/${verb}/responses/${key}/content/${escape(mediaType)}/schema`;
    return this.checkBody(pointer, null, { contentType, payload, expected: [mediaType] });
  }

  private checkBody(
    pointer: string,
    already: string | null,
    answer: { contentType: string; payload: unknown; expected: string[] },
  ): string | null {
    if (already !== null) return already;
    const mediaType = mediaTypeOf(answer.contentType);
    if (!answer.expected.includes(mediaType))
      return `media type "${mediaType}" (expected ${answer.expected.join(', ')})`;
    const text = textOf(answer.payload);
    // Streams (downloads, exports) are checked by media type only; their text is not JSON.
    if (text === null || !isJson(mediaType)) return null;
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      return `the body is not JSON: ${text.slice(0, 200)}`;
    }
    const validate = this.validator(pointer);
    if (validate(body)) return null;
    return `the body does not match ${pointer}: ${this.ajv.errorsText(validate.errors)}; body: ${text.slice(0, 300)}`;
  }

  private validator(pointer: string): ValidateFunction {
    let validate = this.validators.get(pointer);
    if (validate === undefined) {
      validate = this.ajv.compile({ $ref: `openapi.json#${pointer}` });
      this.validators.set(pointer, validate);
    }
    return validate;
  }
}

/** Fastify's route URL as an OpenAPI path: `:name` → `{name}`, `::` (a literal colon) → `:`, a
 * parameter's regex (`:id(^[^:/]+)`) dropped. */
export function openApiPath(routeUrl: string): string {
  return routeUrl
    .replace(/(:[A-Za-z0-9_]+)\([^)]*\)/g, '$1')
    .replace(/::/g, '\0')
    .replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    .replace(/\0/g, ':');
}

/** One JSON-pointer segment, as it goes in a URI fragment. */
function escape(segment: string): string {
  return encodeURIComponent(segment.replace(/~/g, '~0').replace(/\//g, '~1'));
}

function mediaTypeOf(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function isJson(mediaType: string): boolean {
  return mediaType === 'application/json' || mediaType.endsWith('+json');
}

function isEmptyBuffer(payload: unknown): boolean {
  return Buffer.isBuffer(payload) && payload.length === 0;
}

function textOf(payload: unknown): string | null {
  if (typeof payload === 'string') return payload;
  if (Buffer.isBuffer(payload)) return payload.toString('utf8');
  return null;
}

const contracts = new WeakMap<FastifyInstance, Contract>();

function contractOf(root: FastifyInstance): Contract | null {
  let contract = contracts.get(root);
  if (contract === undefined) {
    const swagger = (root as { swagger?: () => unknown }).swagger;
    // Instances without the document (not the service's API): nothing to hold them to.
    if (typeof swagger !== 'function') return null;
    contract = new Contract(swagger.call(root) as OpenApi);
    contracts.set(root, contract);
  }
  return contract;
}

function onSend(root: FastifyInstance) {
  return async (request: FastifyRequest, reply: FastifyReply, payload: unknown) => {
    const routeUrl = request.routeOptions.url;
    const method = request.method;
    if (routeUrl !== undefined && TEST_ONLY_ROUTES.has(`${method} ${routeUrl}`)) return payload;
    // The web console's HTML pages (docs/console.md) are not part of the API's contract.
    if (request.url === '/console' || request.url.startsWith('/console/')) return payload;
    try {
      const contract = contractOf(root);
      if (contract === null) return payload;
      checked++;
      const status = reply.statusCode;
      const contentType = String(reply.getHeader('content-type') ?? '');
      const why = contract.check(method, routeUrl, status, contentType, payload);
      if (why !== null) violations.push(`${method} ${request.url.split('?')[0]} → ${status}: ${why}`);
    } catch (err) {
      violations.push(`${method} ${request.url} → ${reply.statusCode}: the check failed: ${String(err)}`);
    }
    return payload;
  };
}

if (process.env.DX_CONTRACT_CHECK !== '0') {
  subscribe('fastify.initialization', (message) => {
    const { fastify } = message as { fastify: FastifyInstance };
    fastify.addHook('onSend', onSend(fastify));
  });
  after(() => {
    if (violations.length > 0) {
      const distinct = [...new Set(violations)];
      throw new Error(
        `${distinct.length} answer(s) of ${checked} break the OpenAPI document:\n${distinct.join('\n')}`,
      );
    }
  });
}

/** How many answers were checked so far in this process (tests of the check itself). */
export function contractChecked(): { checked: number; violations: readonly string[] } {
  return { checked, violations };
}
