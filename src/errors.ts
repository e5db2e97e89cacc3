// One catalogue of error kinds; the HTTP error handler renders each as RFC 9457 problem-details.

/** The kinds of failure the service reports, with their HTTP status and RFC section. */
export const ERROR_KINDS = {
  invalid: { status: 400, title: 'Bad Request', type: 'https://tools.ietf.org/html/rfc9110#section-15.5.1' },
  unauthenticated: {
    status: 401,
    title: 'Unauthorized',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.2',
  },
  forbidden: { status: 403, title: 'Forbidden', type: 'https://tools.ietf.org/html/rfc9110#section-15.5.4' },
  notFound: { status: 404, title: 'Not Found', type: 'https://tools.ietf.org/html/rfc9110#section-15.5.5' },
  methodNotAllowed: {
    status: 405,
    title: 'Method Not Allowed',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.6',
  },
  requestTimeout: {
    status: 408,
    title: 'Request Timeout',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.9',
  },
  conflict: { status: 409, title: 'Conflict', type: 'https://tools.ietf.org/html/rfc9110#section-15.5.10' },
  gone: { status: 410, title: 'Gone', type: 'https://tools.ietf.org/html/rfc9110#section-15.5.11' },
  tooLarge: {
    status: 413,
    title: 'Content Too Large',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.14',
  },
  uriTooLong: {
    status: 414,
    title: 'URI Too Long',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.15',
  },
  unsupportedMediaType: {
    status: 415,
    title: 'Unsupported Media Type',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.16',
  },
  unprocessable: {
    status: 422,
    title: 'Unprocessable Content',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.5.21',
  },
  headersTooLarge: {
    status: 431,
    title: 'Request Header Fields Too Large',
    type: 'https://tools.ietf.org/html/rfc6585#section-5',
  },
  rateLimited: {
    status: 429,
    title: 'Too Many Requests',
    type: 'https://tools.ietf.org/html/rfc6585#section-4',
  },
  internal: {
    status: 500,
    title: 'Internal Server Error',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.6.1',
  },
  badGateway: {
    status: 502,
    title: 'Bad Gateway',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.6.3',
  },
  unavailable: {
    status: 503,
    title: 'Service Unavailable',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.6.4',
  },
  gatewayTimeout: {
    status: 504,
    title: 'Gateway Timeout',
    type: 'https://tools.ietf.org/html/rfc9110#section-15.6.5',
  },
} as const;

export type ErrorKind = keyof typeof ERROR_KINDS;

/**
 * Every problem's stable, machine-readable `code` (docs/api.md, "Error codes"), with its kind and
 * what it means. A kind's general code is used when the problem names none; the others name a
 * case a client may act on. Codes are never renamed or reused; new ones may be added.
 */
export const ERROR_CODES = {
  invalid_request: {
    kind: 'invalid',
    meaning: 'A parameter, header or body field is not valid; `errors` names each',
  },
  invalid_json: { kind: 'invalid', meaning: 'The body is not well-formed JSON' },
  page_token_invalid: { kind: 'invalid', meaning: 'The pageToken is not one this service issued' },
  changes_cursor_invalid: {
    kind: 'invalid',
    meaning: 'The changes cursor is missing, forged, or of another dataset or installation',
  },
  unauthenticated: { kind: 'unauthenticated', meaning: 'The credential is not valid' },
  authorization_missing: {
    kind: 'unauthenticated',
    meaning: 'No `Authorization: Bearer` credential, or not the one the route takes',
  },
  app_jwt_invalid: {
    kind: 'unauthenticated',
    meaning: 'The app JWT is malformed, forged, expired or of an unknown key',
  },
  access_token_invalid: {
    kind: 'unauthenticated',
    meaning: 'The access token is unknown, revoked or no longer valid',
  },
  access_token_expired: { kind: 'unauthenticated', meaning: 'The access token has expired; mint a new one' },
  forbidden: { kind: 'forbidden', meaning: 'The credential does not allow this' },
  permission_missing: {
    kind: 'forbidden',
    meaning: 'The access token lacks the permission the request needs',
  },
  workspace_key_mismatch: { kind: 'forbidden', meaning: "The Workspace Key is not the workspace's" },
  signed_url_invalid: {
    kind: 'forbidden',
    meaning: 'An upload URL or download link was changed or lacks its signature',
  },
  signed_url_expired: {
    kind: 'forbidden',
    meaning: 'An upload URL or download link has expired; ask for a new one',
  },
  not_found: { kind: 'notFound', meaning: 'Nothing here, or not visible to the caller' },
  dataset_not_found: { kind: 'notFound', meaning: 'No dataset with this id is visible to the caller' },
  job_not_found: { kind: 'notFound', meaning: 'No job with this id is visible to the caller' },
  method_not_allowed: { kind: 'methodNotAllowed', meaning: 'The path does not answer this method' },
  request_timeout: { kind: 'requestTimeout', meaning: 'The request did not arrive in time' },
  conflict: { kind: 'conflict', meaning: 'The request conflicts with the current state' },
  dataset_not_empty: { kind: 'conflict', meaning: 'mode=create on a dataset that holds records' },
  change_feed_off: {
    kind: 'conflict',
    meaning: 'The change feed on a service that keeps no changes (CHANGES_RETENTION_HOURS=0)',
  },
  dataset_has_no_primary_key: {
    kind: 'conflict',
    meaning: 'mode=upsert or mode=delete, or the change feed, on a dataset without a primary key',
  },
  primary_key_change: {
    kind: 'conflict',
    meaning: 'A schema change would change the primary key or one of its properties',
  },
  type_narrowing: {
    kind: 'conflict',
    meaning: "A schema change would change a property's type other than by widening it",
  },
  property_made_required: {
    kind: 'conflict',
    meaning: 'A schema change would make a property the records held may lack required',
  },
  values_do_not_fit: {
    kind: 'conflict',
    meaning: "Values the dataset holds do not fit a widened property's new type",
  },
  dataset_changed_meanwhile: {
    kind: 'conflict',
    meaning: 'A load or another schema change committed while the schema change ran; send it again',
  },
  upload_url_used: { kind: 'conflict', meaning: 'The upload URL already received its file' },
  upload_in_progress: { kind: 'conflict', meaning: 'Another PUT is streaming to this upload URL now' },
  upload_session_ended: { kind: 'conflict', meaning: 'The resumable session is complete or closed' },
  upload_session_moved: {
    kind: 'conflict',
    meaning: 'The resumable session moved on while the slice was stored; ask where it stands',
  },
  page_token_stale: { kind: 'conflict', meaning: 'The job ran again since the page token was issued' },
  idempotency_key_in_progress: {
    kind: 'conflict',
    meaning: 'A request with this Idempotency-Key is still being handled; retry after Retry-After',
  },
  idempotency_key_unreadable: {
    kind: 'conflict',
    meaning: 'The answer kept for this Idempotency-Key can no longer be read; send a new key',
  },
  gone: { kind: 'gone', meaning: 'What the link named no longer exists' },
  upload_session_expired: { kind: 'gone', meaning: 'The resumable session expired; open a new one' },
  changes_cursor_expired: {
    kind: 'gone',
    meaning:
      'The changes since the cursor are no longer kept; read every record again and follow the changes from the cursor that read gives',
  },
  too_large: { kind: 'tooLarge', meaning: 'The body is larger than the limit' },
  file_too_large: { kind: 'tooLarge', meaning: 'The uploaded file is larger than UPLOAD_MAX_BYTES' },
  uri_too_long: { kind: 'uriTooLong', meaning: 'The URL or a path segment is too long' },
  unsupported_media_type: {
    kind: 'unsupportedMediaType',
    meaning: 'The body is of a media type the route does not take',
  },
  unprocessable: { kind: 'unprocessable', meaning: 'The request is well-formed but cannot be processed' },
  idempotency_key_reused: {
    kind: 'unprocessable',
    meaning: 'The Idempotency-Key was used within 24 hours for a different request',
  },
  headers_too_large: { kind: 'headersTooLarge', meaning: 'The request headers are too large' },
  rate_limited: { kind: 'rateLimited', meaning: 'Too many requests; retry after Retry-After' },
  internal_error: { kind: 'internal', meaning: 'An unexpected failure; the log has the traceId' },
  bad_gateway: {
    kind: 'badGateway',
    meaning: 'The proxy could not reach the API, or it closed the connection',
  },
  unavailable: {
    kind: 'unavailable',
    meaning: 'The service cannot answer now (starting, stopping, busy); retry',
  },
  gateway_timeout: { kind: 'gatewayTimeout', meaning: 'The API did not answer the proxy in time' },
} as const satisfies Record<string, { kind: ErrorKind; meaning: string }>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** The codes of one kind. */
export type CodeOf<K extends ErrorKind> = {
  [C in ErrorCode]: (typeof ERROR_CODES)[C]['kind'] extends K ? C : never;
}[ErrorCode];

/** Each kind's general code, used when a problem names no other. */
export const GENERAL_CODES = {
  invalid: 'invalid_request',
  unauthenticated: 'unauthenticated',
  forbidden: 'forbidden',
  notFound: 'not_found',
  methodNotAllowed: 'method_not_allowed',
  requestTimeout: 'request_timeout',
  conflict: 'conflict',
  gone: 'gone',
  tooLarge: 'too_large',
  uriTooLong: 'uri_too_long',
  unsupportedMediaType: 'unsupported_media_type',
  unprocessable: 'unprocessable',
  headersTooLarge: 'headers_too_large',
  rateLimited: 'rate_limited',
  internal: 'internal_error',
  badGateway: 'bad_gateway',
  unavailable: 'unavailable',
  gatewayTimeout: 'gateway_timeout',
} as const satisfies { [K in ErrorKind]: CodeOf<K> };

/** Field path → messages, as in the `errors` member of a problem. */
export type FieldErrors = Record<string, string[]>;

export interface ProblemOptions<K extends ErrorKind = ErrorKind> {
  /** The case among the kind's codes (ERROR_CODES); default: the kind's general code. */
  code?: CodeOf<K>;
  /** Overrides the kind's generic title (the proxy's documented titles use this). */
  title?: string;
  errors?: FieldErrors;
  /** Extra response headers, such as Retry-After. */
  headers?: Record<string, string>;
  cause?: unknown;
}

/** An expected failure with a status and a message safe to show the caller. */
export class ProblemError extends Error {
  readonly status: number;
  readonly title: string;
  readonly type: string;
  readonly errors: FieldErrors;
  readonly headers: Record<string, string>;
  readonly code: ErrorCode;

  constructor(
    readonly kind: ErrorKind,
    readonly detail: string,
    options: ProblemOptions = {},
  ) {
    super(detail, { cause: options.cause });
    const def = ERROR_KINDS[kind];
    this.code = options.code ?? GENERAL_CODES[kind];
    this.status = def.status;
    this.type = def.type;
    this.title = options.title ?? def.title;
    this.errors = options.errors ?? {};
    this.headers = options.headers ?? {};
  }
}

/** The factory: `problem('notFound', 'dataset 42 not found', { code: 'dataset_not_found' })`; the
 * code must be one of the kind's. */
export function problem<K extends ErrorKind>(
  kind: K,
  detail: string,
  options?: ProblemOptions<K>,
): ProblemError {
  // Every code of kind K is an ErrorCode; the compiler cannot see that through the generic.
  return new ProblemError(kind, detail, options as ProblemOptions | undefined);
}

/** Who answered with a problem: the API, or the proxy for its own errors. */
export const PROBLEM_SOURCES = ['api', 'proxy'] as const;
export type ProblemSource = (typeof PROBLEM_SOURCES)[number];

/** The JSON body of a problem; `source` tells the service's own errors from upstream ones. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  detail: string;
  errors: FieldErrors;
  source: ProblemSource;
  traceId: string;
}

/** Renders any error as a problem body; unknown errors become a plain 500 without internals. */
export function toProblemBody(err: unknown, source: ProblemSource, traceId: string): ProblemBody {
  const p = err instanceof ProblemError ? err : problem('internal', 'An unexpected error occurred.');
  return {
    type: p.type,
    title: p.title,
    status: p.status,
    code: p.code,
    detail: p.detail,
    errors: p.errors,
    source,
    traceId,
  };
}
