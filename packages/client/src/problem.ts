// Every refusal of the service is application/problem+json (RFC 9457); the client throws it as a
// DxProblemError whatever the status, so callers catch one type and read the fields.
import type { Problem as ProblemSchema } from './generated/openapi.js';

/** The service's stable problem codes (docs/api.md, "Error codes"), from the OpenAPI document; a
 * newer service may send one this version does not know, hence `string` in `Problem.code`. */
export type ErrorCode = ProblemSchema['code'];

/** The body of a problem as the service writes it (fields other services may leave out optional). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  /** What went wrong, stable and machine-readable; absent when the answer came from elsewhere (a
   * gateway in front of the service). */
  code?: ErrorCode | (string & {});
  detail?: string;
  /** Invalid input: each field path mapped to its messages. */
  errors?: Record<string, string[]>;
  /** `api`, or `proxy` for the proxy's own errors. */
  source?: string;
  /** The request id (X-Request-Id), for the operator's log. */
  traceId?: string;
  instance?: string;
}

/** A non-2xx answer of the service. */
export class DxProblemError extends Error implements Problem {
  override readonly name = 'DxProblemError';
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly code?: ErrorCode | (string & {});
  readonly detail?: string;
  readonly errors?: Record<string, string[]>;
  readonly source?: string;
  readonly traceId?: string;
  readonly instance?: string;
  /** `METHOD path` of the request that was refused (no query: it may hold a signature). */
  readonly request: string;
  /** Retry-After in seconds, when the service sent it (409 while an idempotent request runs, 429). */
  readonly retryAfterSeconds: number | null;

  constructor(problem: Problem, request: string, retryAfterSeconds: number | null = null) {
    super(`${request}: ${problem.status} ${problem.title}${problem.detail ? `: ${problem.detail}` : ''}`);
    this.type = problem.type;
    this.title = problem.title;
    this.status = problem.status;
    if (problem.code !== undefined) this.code = problem.code;
    if (problem.detail !== undefined) this.detail = problem.detail;
    if (problem.errors !== undefined) this.errors = problem.errors;
    if (problem.source !== undefined) this.source = problem.source;
    if (problem.traceId !== undefined) this.traceId = problem.traceId;
    if (problem.instance !== undefined) this.instance = problem.instance;
    this.request = request;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** Whether `err` is a problem the service answered, optionally with the given status or code
 * (`isDxProblem(err, 'dataset_not_empty')`). */
export function isDxProblem(err: unknown, statusOrCode?: number | ErrorCode): err is DxProblemError {
  if (!(err instanceof DxProblemError)) return false;
  if (statusOrCode === undefined) return true;
  return typeof statusOrCode === 'number' ? err.status === statusOrCode : err.code === statusOrCode;
}

/** Reads a non-2xx response into a DxProblemError; a body that is no problem still gives one. */
export async function problemFromResponse(res: Response, request: string): Promise<DxProblemError> {
  const text = await res.text().catch(() => '');
  const retry = res.headers.get('retry-after');
  const retryAfter = retry !== null && /^\d+$/.test(retry) ? Number(retry) : null;
  let body: Partial<Problem> | null = null;
  if ((res.headers.get('content-type') ?? '').includes('json')) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (parsed !== null && typeof parsed === 'object') body = parsed;
    } catch {
      body = null;
    }
  }
  const problem: Problem = {
    type: typeof body?.type === 'string' ? body.type : 'about:blank',
    title: typeof body?.title === 'string' ? body.title : res.statusText || `HTTP ${res.status}`,
    status: res.status,
  };
  const detail =
    typeof body?.detail === 'string' ? body.detail : body === null ? text.slice(0, 500) : undefined;
  if (detail !== undefined && detail !== '') problem.detail = detail;
  if (body?.errors !== undefined && body.errors !== null && typeof body.errors === 'object')
    problem.errors = body.errors;
  if (typeof body?.code === 'string') problem.code = body.code;
  if (typeof body?.source === 'string') problem.source = body.source;
  if (typeof body?.traceId === 'string') problem.traceId = body.traceId;
  if (typeof body?.instance === 'string') problem.instance = body.instance;
  return new DxProblemError(problem, request, retryAfter);
}
