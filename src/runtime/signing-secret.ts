// The HMAC key of signed URLs: from SIGNING_SECRET, or generated once and kept in DATA_DIR so a
// single-node install survives restarts without set-up. Several nodes must share SIGNING_SECRET.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ConfigError, type Config } from '../config.js';

/** The signing secret in force for this configuration. */
export function resolveSigningSecret(config: Config): string {
  if (config.signingSecret !== '') return config.signingSecret;
  const file = join(config.dataDir, 'signing-secret');
  try {
    return readFileSync(file, 'utf8').trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32).toString('base64url');
  try {
    mkdirSync(config.dataDir, { recursive: true, mode: 0o700 });
    writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
    return secret;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    // Another process created it first: use theirs.
    if (code === 'EEXIST') return readFileSync(file, 'utf8').trim();
    // A container's read-only file system, say: name the setting rather than the file.
    if (code === 'EROFS' || code === 'EACCES' || code === 'EPERM') {
      throw new ConfigError([
        `SIGNING_SECRET: not set, and no secret can be kept in ${config.dataDir} (${code}); ` +
          'set it, the same in every process (at least 32 characters: openssl rand -base64 36)',
      ]);
    }
    throw err;
  }
}
