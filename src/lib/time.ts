// Timestamps as the public record shows them: ISO 8601, UTC, no zone suffix, six fractional digits.

/** The current instant in microseconds since the epoch. */
export function nowMicros(): bigint {
  return BigInt(Math.floor((performance.timeOrigin + performance.now()) * 1000));
}

/** Formats epoch microseconds as `2024-08-21T23:16:34.230069`. */
export function formatMicros(micros: bigint): string {
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
