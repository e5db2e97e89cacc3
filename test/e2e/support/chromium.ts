// Debian's Chromium, driven by playwright-core: where it is, how it starts, and what happens when
// it is missing. Shared by the browser suites and the screenshot script.
import { accessSync, constants } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's package puts it here; CHROMIUM_PATH points elsewhere (another distribution, a Mac). */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The flags the machine needs: headless as root (no sandbox), no GPU, and none of Chromium's own
 * connections to the outside (updates, sync, QUIC probes): on a closed network they are refused
 * many at a time and slow every start. playwright-core adds --headless and a fresh, empty
 * user data directory of its own to every launch.
 */
export const CHROMIUM_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Why Chromium cannot run here, or null when it can. */
export function chromiumProblem(): string | null {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
    return null;
  } catch {
    return `Chromium is not installed at ${CHROMIUM_PATH} (Debian: apt-get install chromium; elsewhere set CHROMIUM_PATH)`;
  }
}

/** Starts a headless Chromium; the caller closes it. */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: CHROMIUM_ARGS });
}
