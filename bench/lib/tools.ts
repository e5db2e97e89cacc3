// External tools the suite drives (wrk, nginx): found on PATH, or installed from Debian's packages.
import { spawnSync } from 'node:child_process';

/** Whether `name` is an executable on PATH (or in /usr/sbin, where Debian puts nginx). */
export function hasCommand(name: string): boolean {
  return commandPath(name) !== null;
}

/** The full path of `name`, or null. */
export function commandPath(name: string): string | null {
  const r = spawnSync('sh', ['-c', `command -v ${name} || command -v /usr/sbin/${name}`], {
    encoding: 'utf8',
  });
  const path = r.stdout.trim().split('\n')[0];
  return r.status === 0 && path !== undefined && path !== '' ? path : null;
}

/**
 * Installs the first of `packages` that apt can install, when `command` is missing and we are root
 * (Debian images); returns whether `command` is there afterwards. Never fatal: parts degrade.
 */
export function ensureCommand(command: string, packages: readonly string[]): boolean {
  if (hasCommand(command)) return true;
  if (process.getuid?.() !== 0 || !hasCommand('apt-get')) return false;
  console.error(`installing ${command} (${packages.join(' or ')}) with apt-get…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  spawnSync('apt-get', ['update', '-qq'], { stdio: 'ignore', env });
  for (const pkg of packages) {
    const r = spawnSync('apt-get', ['install', '-y', '-qq', pkg], { stdio: 'ignore', env });
    if (r.status === 0 && hasCommand(command)) return true;
  }
  return hasCommand(command);
}
