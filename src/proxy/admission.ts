// The checks a request passes before it is forwarded, in the order they run. Each is a small named
// function of the request and what the proxy knows (the active proxy IDs, the rate limit, the body
// limit) that either passes or refuses with one of the proxy's problems. A new admission rule is one
// more entry of ADMISSION_CHECKS.
import type { ProblemError } from '../errors.js';
import type { ConnectionMemo } from './client-side.js';
import { isWellFormedAuthorization } from './auth-check.js';
import type { RequestHeaderScan } from './headers.js';
import {
  bodyTooLarge,
  invalidProxyId,
  missingAuthorization,
  rateLimited,
  unsupportedTarget,
} from './problems.js';
import type { RateLimit } from './rate-limit.js';

/** The request as the checks see it. */
export interface Applicant {
  readonly scan: RequestHeaderScan;
  /** The request target as sent. */
  readonly url: string;
  /** What earlier requests on the same client connection proved (reused, never shared). */
  readonly memo: ConnectionMemo;
  /** The proxy ID's non-secret prefix, set by the proxy ID check when it passes. */
  proxyId: string;
}

/** The active proxy IDs, as the checks ask about them. */
export interface ProxyIdLookup {
  /** Changes whenever the set of active IDs is replaced. */
  readonly generation: number;
  /** The prefix of an active ID held in memory, else undefined. */
  lookup(id: string): string | undefined;
  /** Like `lookup`, reloading the set first when the ID may have been created since. */
  lookupOrRefresh(id: string): Promise<string | undefined>;
}

/** What the checks compare a request against. */
export interface AdmissionRules {
  readonly proxyIds: ProxyIdLookup;
  readonly rateLimit: Pick<RateLimit, 'take'>;
  readonly bodyLimitBytes: number;
}

/** A check's answer: it passed, it needs an ID not in memory (see `lookUpProxyId`), or a refusal. */
export type CheckResult = typeof PASS | typeof ID_NOT_IN_MEMORY | Refusal;

/** The request may go on. */
export const PASS = null;
/** The proxy ID is not among those in memory: the set must be reloaded before the check can say. */
export const ID_NOT_IN_MEMORY = 0;

/** Why a request is answered by the proxy instead of forwarded. */
export interface Refusal {
  readonly problem: ProblemError;
  /**
   * The client connection closes after the answer: reading an unwanted large body just to keep
   * the connection costs more than the client reconnecting.
   */
  readonly endsConnection: boolean;
}

/** One named check. */
export interface AdmissionCheck {
  readonly name: string;
  readonly run: (a: Applicant, rules: AdmissionRules) => CheckResult;
}

/** Unread bodies up to this size are read and dropped after a refusal, keeping the connection. */
export const DRAIN_LIMIT = 64 * 1024;

/** Whether a refused request leaves a body too large (or of unknown size) to read and drop. */
export const leavesLargeBody = (scan: RequestHeaderScan): boolean =>
  scan.hasBody && (scan.contentLength < 0 || scan.contentLength > DRAIN_LIMIT);

const refuse = (a: Applicant, problem: ProblemError): Refusal => ({
  problem,
  endsConnection: leavesLargeBody(a.scan),
});

/**
 * Framing: the target is a path (origin form). Absolute-form and asterisk-form targets are
 * refused rather than forwarded somewhere unexpected.
 */
export function checkFraming(a: Applicant): CheckResult {
  return a.url.charCodeAt(0) === 47 ? PASS : refuse(a, unsupportedTarget());
}

/**
 * Authorization is well formed (whether it is right is the upstream's business). A keep-alive
 * client repeats its credentials: the same value this connection proved before still holds.
 */
export function checkAuthorization(a: Applicant): CheckResult {
  const auth = a.scan.authorization;
  if (auth === a.memo.authorization && auth !== '') return PASS;
  if (auth === null || auth === undefined || !isWellFormedAuthorization(auth))
    return refuse(a, missingAuthorization());
  a.memo.authorization = auth;
  return PASS;
}

/**
 * The proxy ID (X-PROXYVID or X-MIGVID) is active. The answer for this connection's last ID holds
 * until the set of active IDs is replaced.
 */
export function checkProxyId(a: Applicant, rules: AdmissionRules): CheckResult {
  const id = a.scan.proxyId;
  if (id === null || id === undefined) return refuse(a, invalidProxyId(a.scan.proxyIdHeader));
  const { memo } = a;
  if (id === memo.proxyId && memo.generation === rules.proxyIds.generation) {
    a.proxyId = memo.prefix;
    return PASS;
  }
  const prefix = rules.proxyIds.lookup(id);
  if (prefix === undefined) return ID_NOT_IN_MEMORY;
  acceptProxyId(a, rules, id, prefix);
  return PASS;
}

/** The proxy ID's rate allows one more request now; else 429 with the seconds to wait. */
export function checkRateLimit(a: Applicant, rules: AdmissionRules): CheckResult {
  const wait = rules.rateLimit.take(a.proxyId);
  return wait > 0 ? refuse(a, rateLimited(wait)) : PASS;
}

/**
 * A declared body is within the limit (a chunked one is counted as it streams). The body is not
 * read: the connection closes after the answer.
 */
export function checkBodyLimit(a: Applicant, rules: AdmissionRules): CheckResult {
  if (a.scan.contentLength <= rules.bodyLimitBytes) return PASS;
  return { problem: bodyTooLarge(rules.bodyLimitBytes), endsConnection: true };
}

/**
 * Every check, in order: the cheapest refusals first, the rate limit only for a known proxy ID
 * (its bucket is keyed by it), the body limit last so an oversized request still counts against
 * the rate.
 */
export const ADMISSION_CHECKS: readonly AdmissionCheck[] = [
  { name: 'framing', run: checkFraming },
  { name: 'authorization', run: checkAuthorization },
  { name: 'proxyId', run: checkProxyId },
  { name: 'rateLimit', run: checkRateLimit },
  { name: 'bodyLimit', run: checkBodyLimit },
];

const AFTER_PROXY_ID = ADMISSION_CHECKS.findIndex((c) => c.run === checkProxyId) + 1;

/**
 * Runs the checks from the `from`th on: PASS when every one passed, the first refusal, or
 * ID_NOT_IN_MEMORY (then `lookUpProxyId` settles the ID and runs the rest).
 */
export function runChecks(a: Applicant, rules: AdmissionRules, from = 0): CheckResult {
  for (let i = from; i < ADMISSION_CHECKS.length; i++) {
    const result = (ADMISSION_CHECKS[i] as AdmissionCheck).run(a, rules);
    if (result !== PASS) return result;
  }
  return PASS;
}

/**
 * An ID not in memory may have been created since the last reload: asks again (the cache bounds
 * how often it reloads), then runs the checks after the proxy ID's. A failed reload refuses.
 */
export async function lookUpProxyId(a: Applicant, rules: AdmissionRules): Promise<PassOrRefusal> {
  const id = a.scan.proxyId as string;
  const prefix = await rules.proxyIds.lookupOrRefresh(id).catch(() => undefined);
  if (prefix === undefined) return refuse(a, invalidProxyId(a.scan.proxyIdHeader));
  acceptProxyId(a, rules, id, prefix);
  return runChecks(a, rules, AFTER_PROXY_ID) as PassOrRefusal;
}

/** The outcome once every check could answer. */
export type PassOrRefusal = typeof PASS | Refusal;

function acceptProxyId(a: Applicant, rules: AdmissionRules, id: string, prefix: string): void {
  a.proxyId = prefix;
  a.memo.proxyId = id;
  a.memo.prefix = prefix;
  a.memo.generation = rules.proxyIds.generation;
}
