// The browser suites' harness: the real service (the composition root `dx serve` runs, api and
// worker roles, on a loopback port) on a fresh SQLite and PostgreSQL database, Debian's Chromium
// started once per test file, and a fresh browser context (cookies, storage) for every page a test
// opens, closed after the test. Chromium missing: the suites fail under REQUIRE_BROWSER=1 (CI),
// and are skipped with a message on stderr otherwise (a developer's machine without it).
import { after, afterEach, before, describe } from 'node:test';
import { execFile, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { forEachDatabase } from '../../support/databases.js';
import { startFixture, type Fixture } from '../../support/fixture.js';
import { consoleDb } from '../../../src/domain/console/db.js';
import { chromiumProblem, launchChromium } from './chromium.js';

const BIN = join(process.cwd(), 'bin', 'dx.js');
const run = promisify(execFile);

/** A phone's width (iPhone SE / mini class), the narrowest the console promises to fit. */
export const PHONE = { width: 375, height: 740 };
export const DESKTOP = { width: 1280, height: 800 };

/** How long one browser action (a click, a navigation, an expectation) may take before failing. */
const ACTION_TIMEOUT_MS = 15_000;

export interface ConsoleE2E {
  /** The running service: its database, its app (inject), its config. */
  readonly fixture: Fixture;
  /** The API's origin, e.g. http://127.0.0.1:41234 */
  readonly baseUrl: string;
  /** An absolute URL of the service for `path`. */
  url(path: string): string;
  /** A page in a browser context of its own (no cookies shared with any other page). */
  newPage(viewport?: { width: number; height: number }): Promise<Page>;
  /** Runs `dx` as the operator does, against the service's database; returns stdout. */
  dx(...args: string[]): Promise<string>;
  /** As dx, with `input` on standard input (for --password-stdin). */
  dxWithInput(input: string, ...args: string[]): Promise<string>;
  /** The console's tables, to check what a refused request did not do. */
  db(): ReturnType<typeof consoleDb>;
}

/** Where a failed test's pages are saved as PNGs (E2E_ARTIFACTS, or a folder in the temp dir). */
const EVIDENCE_DIR = process.env.E2E_ARTIFACTS ?? join(tmpdir(), 'dx-e2e-failures');

/** Saves a screenshot of every page a failed test left open and says where, on stderr. */
async function keepEvidence(testName: string, engine: string, contexts: BrowserContext[]) {
  mkdirSync(EVIDENCE_DIR, { recursive: true });
  const stem = `${engine}-${testName.replace(/[^a-z0-9]+/gi, '-').slice(0, 60)}`;
  const pages = contexts.flatMap((c) => c.pages());
  for (const [i, page] of pages.entries()) {
    const file = join(EVIDENCE_DIR, `${stem}-${i}.png`);
    try {
      await page.screenshot({ path: file, fullPage: true });
      process.stderr.write(`failed test's page ${page.url()} saved to ${file}\n`);
    } catch {
      // A page that crashed or closed has nothing to show.
    }
  }
}

let browser: Promise<Browser> | null = null;
let closeRegistered = false;

/** One Chromium for the whole test file, started on first use and closed after the file. */
function sharedBrowser(): Promise<Browser> {
  browser ??= launchChromium();
  if (!closeRegistered) {
    closeRegistered = true;
    after(async () => {
      if (browser !== null) await (await browser).close();
    });
  }
  return browser;
}

/**
 * Declares `suite` once per database (named `<name> (sqlite|postgres)`), with the service and the
 * browser ready in its tests; `serviceEnv` adds settings (say, an SMTP server's). Await it at the
 * top level of a test file.
 */
export async function consoleSuite(
  name: string,
  suite: (c: ConsoleE2E) => void,
  serviceEnv: Record<string, string> = {},
): Promise<void> {
  const problem = chromiumProblem();
  if (problem !== null && process.env.REQUIRE_BROWSER === '1')
    throw new Error(`REQUIRE_BROWSER=1 but the browser tests cannot run: ${problem}`);
  if (problem !== null) {
    process.stderr.write(`${problem}: browser tests skipped (REQUIRE_BROWSER=1 makes this a failure).\n`);
    // Still declared, as skipped, so the report names what did not run.
    void describe(name, { skip: problem }, () => undefined);
    return;
  }
  // Sharing after-hooks between the two database suites needs the browser registered up front.
  void sharedBrowser();
  await forEachDatabase(name, (target) => {
    let fixture: Fixture | undefined;
    let env: NodeJS.ProcessEnv = {};
    const contexts: BrowserContext[] = [];
    before(async () => {
      fixture = await startFixture(target, serviceEnv);
      env = {
        ...process.env,
        ...fixture.processEnv,
        LOG_LEVEL: 'silent',
        // Links the CLI prints point at this service.
        PUBLIC_URL: fixture.baseUrl,
      };
    });
    after(async () => {
      await fixture?.close();
    });
    afterEach(async (t) => {
      const open = contexts.splice(0);
      // `passed` is Node 21.7+ (the types are Node 20's).
      if ((t as { passed?: boolean }).passed === false) await keepEvidence(t.name, target.name, open);
      await Promise.all(open.map((c) => c.close()));
    });

    const running = () => {
      if (fixture === undefined) throw new Error('the service did not start');
      return fixture;
    };
    const c: ConsoleE2E = {
      get fixture() {
        return running();
      },
      get baseUrl() {
        return running().baseUrl;
      },
      url: (path) => `${running().baseUrl}${path}`,
      async newPage(viewport = DESKTOP) {
        const context = await (await sharedBrowser()).newContext({ viewport, baseURL: running().baseUrl });
        contexts.push(context);
        context.setDefaultTimeout(ACTION_TIMEOUT_MS);
        return context.newPage();
      },
      async dx(...args) {
        return (await run(process.execPath, [BIN, ...args], { env })).stdout;
      },
      dxWithInput: (input, ...args) =>
        new Promise((resolve, reject) => {
          const child = spawn(process.execPath, [BIN, ...args], { env });
          let stdout = '';
          let stderr = '';
          child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
          child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
          child.on('error', reject);
          child.on('close', (code) =>
            code === 0 ? resolve(stdout) : reject(new Error(`dx ${args.join(' ')}: exit ${code}\n${stderr}`)),
          );
          child.stdin.end(input);
        }),
      db: () => consoleDb(running().database.db),
    };
    suite(c);
  });
}
