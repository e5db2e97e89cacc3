// The HMAC key of signed URLs: from SIGNING_SECRET, or generated once and kept in DATA_DIR so a
// single-node install survives restarts without set-up. Several nodes must share SIGNING_SECRET.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config.js';

/** The signing secret in force for this configuration. */
export function resolveSigningSecret(config: Config): string {
  if (config.signingSecret !== '') return config.signingSecret;
  const file = join(config.dataDir, 'signing-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString('base64url');
  try {
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    throw err;
  }
}
