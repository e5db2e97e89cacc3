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

/** Field path → messages, as in the `errors` member of a problem. */
export type FieldErrors = Record<string, string[]>;

export interface ProblemOptions {
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

  constructor(
    readonly kind: ErrorKind,
    readonly detail: string,
    options: ProblemOptions = {},
  ) {
    super(detail, { cause: options.cause });
    const def = ERROR_KINDS[kind];
    this.status = def.status;
    this.type = def.type;
    this.title = options.title ?? def.title;
    this.errors = options.errors ?? {};
    this.headers = options.headers ?? {};
  }
}

/** The factory: `problem('notFound', 'dataset 42 not found')`. */
export function problem(kind: ErrorKind, detail: string, options?: ProblemOptions): ProblemError {
  return new ProblemError(kind, detail, options);
}

/** The JSON body of a problem; `source` tells the service's own errors from upstream ones. */
export interface ProblemBody {
  type: string;
  title: string;
  status: number;
  detail: string;
  errors: FieldErrors;
  source: 'api' | 'proxy';
  traceId: string;
}

/** Renders any error as a problem body; unknown errors become a plain 500 without internals. */
export function toProblemBody(err: unknown, source: 'api' | 'proxy', traceId: string): ProblemBody {
  const p = err instanceof ProblemError ? err : problem('internal', 'An unexpected error occurred.');
  return {
    type: p.type,
    title: p.title,
    status: p.status,
    detail: p.detail,
    errors: p.errors,
    source,
    traceId,
  };
}
