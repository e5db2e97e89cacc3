// Waiting for what a service does after it answers: a cleanup, a worker's move.

/** Polls `check` every 25 ms until it is true or `timeoutMs` passed; returns its last answer. */
export async function eventually(check: () => Promise<boolean>, timeoutMs = 60_000): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}
