// The proxy's clock: monotonic milliseconds (performance.now()), read once per read callback. A
// request's way through the proxy asks for the time about a dozen times (timeouts, durations,
// last activity); within one read callback those asks are the same instant to within
// microseconds, so the first read is held until the callback returns (one clock read per packet
// instead of a dozen).
// Outside a read callback (timers, drain events, promise continuations) every ask reads anew.

let held = -1;

/** Monotonic milliseconds: the held reading inside a read callback, a fresh one elsewhere. */
export function timeMs(): number {
  return held >= 0 ? held : performance.now();
}

/** Starts a read callback: the time is read once and held until `releaseTime`. */
export function holdTime(): void {
  held = performance.now();
}

/** Ends a read callback: the time is read anew again. */
export function releaseTime(): void {
  held = -1;
}
