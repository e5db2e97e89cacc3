// The one function through which every local object path is made: a key can never name a file
// outside the store's root (no `..`, no absolute paths, no backslashes, no NUL, no empty segments).
import { isAbsolute, join, relative, resolve, sep } from 'node:path';

/** A key that would leave the store's root or is malformed. */
export class UnsafePath extends Error {}

const SEGMENT = /^[A-Za-z0-9][A-Za-z0-9._=-]{0,254}$/;

/** Resolves `key` to a path inside `root`, or throws UnsafePath. */
export function safeObjectPath(root: string, key: string): string {
  if (key === '' || key.length > 1024) throw new UnsafePath('an object key must have 1 to 1024 characters');
  if (isAbsolute(key) || key.startsWith('/')) throw new UnsafePath(`object key "${key}" is absolute`);
  const segments = key.replace(/\/$/, '').split('/');
  for (const segment of segments) {
    // The pattern rules out "", ".", "..", "\\", ":" and NUL: a key is plain names joined by "/".
    if (!SEGMENT.test(segment) || segment === '..' || segment.includes('..')) {
      throw new UnsafePath(`object key "${key}" has an unsafe segment "${segment}"`);
    }
  }
  const base = resolve(root);
  const full = resolve(join(base, ...segments));
  const rel = relative(base, full);
  // Belt and braces: whatever the checks above missed, the result must stay below the root.
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel) || rel.split(sep).includes('..')) {
    throw new UnsafePath(`object key "${key}" escapes the data directory`);
  }
  return full;
}
