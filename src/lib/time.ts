// Timestamps as the public record shows them: ISO 8601, UTC, no zone suffix, six fractional digits.

/** The current instant in microseconds since the epoch. */
export function nowMicros(): bigint {
  return BigInt(Math.floor((performance.timeOrigin + performance.now()) * 1000));
}

/** Microseconds a double holds exactly (until the year 2255). */
const MAX_EXACT_MICROS = BigInt(Number.MAX_SAFE_INTEGER);

/** The second whose `YYYY-MM-DDTHH:MM:SS` was formatted last: a busy process formats the same
 * second over and over, and `toISOString` is most of the cost. */
let lastSecond = Number.NaN;
let lastSecondText = '';

/** Formats epoch microseconds as `2024-08-21T23:16:34.230069`. */
export function formatMicros(micros: bigint): string {
  if (micros < 0n || micros > MAX_EXACT_MICROS) return formatMicrosExactly(micros);
  const us = Number(micros);
  const second = Math.floor(us / 1_000_000);
  if (second !== lastSecond) {
    lastSecondText = new Date(second * 1000).toISOString().slice(0, 19);
    lastSecond = second;
  }
  return `${lastSecondText}.${String(us - second * 1_000_000).padStart(6, '0')}`;
}

/** formatMicros in BigInt arithmetic (exported for its test), for instants past MAX_EXACT_MICROS or before the epoch. */
export function formatMicrosExactly(micros: bigint): string {
  const millis = micros / 1000n;
  const iso = new Date(Number(millis)).toISOString(); // 2024-08-21T23:16:34.230Z
  const frac = (micros % 1_000_000n).toString().padStart(6, '0');
  return `${iso.slice(0, 19)}.${frac}`;
}

/** The current instant, formatted for storage and responses. */
export function nowTimestamp(): string {
  return formatMicros(nowMicros());
}

/** Seconds since the epoch, as JWT claims, signed URLs and access tokens' expiry use them (job
 * instants are epoch milliseconds: Date.now()). */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** Formats epoch seconds in the response timestamp format. */
export function formatSeconds(seconds: number): string {
  return formatMicros(BigInt(seconds) * 1_000_000n);
}
