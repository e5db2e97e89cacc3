// Request ids and W3C trace context as they cross the proxy and the API: what a caller may send is
// checked here once, so both roles keep, log and pass on the same values.

/** Longest X-Request-Id kept from a caller; a longer one is replaced by a generated id. */
export const REQUEST_ID_MAX_LENGTH = 200;

/**
 * Whether a caller's X-Request-Id may be kept: 1–200 visible ASCII characters (no space, no
 * control character), so it can go into a header and a log line unchanged.
 */
export function isSafeRequestId(value: string): boolean {
  const n = value.length;
  if (n === 0 || n > REQUEST_ID_MAX_LENGTH) return false;
  for (let i = 0; i < n; i++) {
    const c = value.charCodeAt(i);
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

// version "-" trace-id "-" parent-id "-" flags, lower-case hex (W3C Trace Context §3.2).
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-|$)/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_PARENT = '0'.repeat(16);

/**
 * Whether `value` is a valid `traceparent`: version 00 exactly as specified; a later version by
 * its first four fields (what the specification tells a version-00 reader to accept); never
 * version ff or an all-zero trace or parent id.
 */
export function isValidTraceparent(value: string): boolean {
  if (value.length < 55 || value.length > 512) return false;
  const m = TRACEPARENT.exec(value);
  if (m === null) return false;
  const [, version, traceId, parentId] = m;
  if (version === 'ff' || traceId === ZERO_TRACE || parentId === ZERO_PARENT) return false;
  return version !== '00' || value.length === 55;
}

/** Longest `tracestate` recorded (the specification lets a vendor drop state past 512 characters). */
const TRACESTATE_MAX_LENGTH = 512;

/** Whether a `tracestate` value may be logged: printable ASCII, at most 512 characters. */
export function isLoggableTracestate(value: string): boolean {
  return value.length > 0 && value.length <= TRACESTATE_MAX_LENGTH && /^[\x20-\x7e]*$/.test(value);
}

/** The W3C trace context of a request as its log lines carry it: only what is well formed. */
export interface TraceFields {
  traceparent?: string;
  tracestate?: string;
}

/** The trace fields of a request's headers, added to `into` (a request logger's bindings). */
export function addTraceFields(
  headers: Record<string, string | string[] | undefined>,
  into: TraceFields,
): void {
  const { traceparent, tracestate } = headers;
  if (typeof traceparent !== 'string' || !isValidTraceparent(traceparent)) return;
  into.traceparent = traceparent;
  if (typeof tracestate === 'string' && isLoggableTracestate(tracestate)) into.tracestate = tracestate;
}
