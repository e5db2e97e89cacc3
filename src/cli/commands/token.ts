// `dx token`: mints an app JWT from a private-key file, for curl users.
import { createPrivateKey } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { signAppJwt } from '../../domain/identity/app-jwt-signer.js';
import { parseId } from '../context.js';

/** The longest app JWT the service accepts (exp - iat). */
const MAX_TTL_SECONDS = 3600;

/** Registers `token` on the program. */
export function registerTokenCommand(program: Command): void {
  program
    .command('token')
    .description('print an app JWT signed with a private key file (needs no database)')
    .requiredOption('--app <platformAppId>', 'the app (iss claim)')
    .requiredOption('--key <file>', 'PEM private key file')
    .option('--kid <kid>', 'key id to put in the header')
    .option('--ttl <seconds>', 'lifetime in seconds, 1 to 3600', '3600')
    .option('--audience <aud>', 'aud claim, when the service is configured with JWT_AUDIENCE')
    .action(async (opts: { app: string; key: string; kid?: string; ttl: string; audience?: string }) => {
      const ttlSeconds = parseTtl(opts.ttl);
      const jwt = await signAppJwt({
        appId: opts.app,
        privateKeyPem: checkPrivateKey(opts.key, readKeyFile(opts.key)),
        ttlSeconds,
        ...(opts.kid !== undefined ? { kid: opts.kid } : {}),
        ...(opts.audience !== undefined ? { audience: opts.audience } : {}),
      });
      process.stdout.write(`${jwt}\n`);
    });
}

/** The --ttl value, checked against what the service accepts (a longer JWT would be refused). */
function parseTtl(value: string): number {
  const ttl = parseId(value, '--ttl');
  if (ttl > MAX_TTL_SECONDS) {
    throw new Error(
      `--ttl must be at most ${MAX_TTL_SECONDS} seconds: the service refuses longer app JWTs (got ${ttl})`,
    );
  }
  return ttl;
}

function readKeyFile(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new Error(
      `cannot read the --key file ${file} (${code}); it is the PEM file \`dx apps create --key-out\` wrote`,
    );
  }
}

/** The key file's text once it is known to be a key the service's app JWTs can be signed with;
 * otherwise an error that says what the file holds, not OpenSSL's decoder message. */
function checkPrivateKey(file: string, pem: string): string {
  const wrote = 'use the PEM file `dx apps create --key-out` wrote';
  if (/-----BEGIN (RSA |EC )?PUBLIC KEY-----/.test(pem))
    throw new Error(`the --key file ${file} holds a public key; it takes the app's private key: ${wrote}`);
  let type: string | undefined;
  let curve: string | undefined;
  try {
    const key = createPrivateKey(pem);
    type = key.asymmetricKeyType;
    curve = key.asymmetricKeyDetails?.namedCurve;
  } catch {
    throw new Error(
      `the --key file ${file} is not a PEM private key (-----BEGIN PRIVATE KEY-----); ${wrote}`,
    );
  }
  if (type === 'rsa' || (type === 'ec' && curve === 'prime256v1')) return pem;
  throw new Error(
    `the --key file ${file} holds a key of type ${type ?? 'unknown'}${curve !== undefined ? ` (${curve})` : ''}; ` +
      'app keys are RSA (RS256) or EC P-256 (ES256)',
  );
}
