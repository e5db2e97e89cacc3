// The service's version, as package.json gives it (the CLI's --version, the console's health page).
import { readFileSync } from 'node:fs';

let cached: string | undefined;

/** The version in package.json (dist/src/lib/version.js is three folders below it). */
export function packageVersion(): string {
  cached ??= (
    JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    }
  ).version;
  return cached;
}
