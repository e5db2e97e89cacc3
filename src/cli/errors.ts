// What the CLI prints when a command fails: one line that names what was tried and what to do,
// rather than a bare `connect ECONNREFUSED` or `fetch failed`.
import { redactUrl } from '../lib/redact.js';

interface SystemError {
  code?: string;
  address?: string;
  port?: number;
  hostname?: string;
}

/** Why a connection failed, in words, by its system error code. */
const CONNECT_FAILURES: Record<string, string> = {
  ECONNREFUSED: 'nothing listens there',
  ENOTFOUND: 'the host name does not resolve',
  EAI_AGAIN: 'the host name could not be resolved now',
  ETIMEDOUT: 'the connection timed out',
  ECONNRESET: 'the connection was reset',
  EHOSTUNREACH: 'the host is unreachable',
  UND_ERR_SOCKET: 'the connection was closed',
};

/** The system error behind an error (fetch wraps it as `cause`; pg throws it as is). */
function systemErrorOf(err: unknown): SystemError | null {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    const code = (e as SystemError).code;
    if (code !== undefined && code in CONNECT_FAILURES) return e as SystemError;
  }
  return null;
}

function describeConnectFailure(sys: SystemError): string {
  const where = sys.address ?? sys.hostname;
  const at = where !== undefined ? ` (${where}${sys.port !== undefined ? `:${sys.port}` : ''})` : '';
  return `${CONNECT_FAILURES[sys.code ?? ''] ?? sys.code}${at}`;
}

/** A network failure of a call to the service's API, or null when `err` is something else. */
export function serviceUnreachable(err: unknown, apiUrl: string): Error | null {
  const sys = systemErrorOf(err);
  if (sys === null) return null;
  return new Error(
    `cannot reach the service at ${redactUrl(apiUrl)}: ${describeConnectFailure(sys)}. ` +
      'Is it running (`npm start`)? Another address: --url or DX_API_URL.',
    { cause: err },
  );
}

/** A failure to open the database, or null when `err` is something else. */
export function databaseUnreachable(err: unknown, databaseUrl: string): Error | null {
  const sys = systemErrorOf(err);
  if (sys === null) return null;
  return new Error(
    `cannot open the database ${redactUrl(databaseUrl)}: ${describeConnectFailure(sys)}. ` +
      'Is PostgreSQL running there? Another database: DATABASE_URL.',
    { cause: err },
  );
}

/** Why a call found the service unavailable, in a few words: the connection's failure, or the status. */
export function unavailableReason(err: unknown): string {
  const sys = systemErrorOf(err);
  if (sys !== null) return describeConnectFailure(sys);
  const status = (err as { status?: unknown } | null)?.status;
  if (typeof status === 'number') return `HTTP ${status}`;
  return err instanceof Error ? err.message : String(err);
}
