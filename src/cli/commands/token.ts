// `dx token`: mints an app JWT from a private-key file, for curl users.
import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { signAppJwt } from '../../domain/identity/app-jwt-signer.js';
import { parseId } from '../context.js';

/** Registers `token` on the program. */
export function registerTokenCommand(program: Command): void {
  program
    .command('token')
    .description('print an app JWT signed with a private key file (needs no database)')
    .requiredOption('--app <platformAppId>', 'the app (iss claim)')
    .requiredOption('--key <file>', 'PEM private key file')
    .option('--kid <kid>', 'key id to put in the header')
    .option('--ttl <seconds>', 'lifetime, at most 3600', '3600')
    .option('--audience <aud>', 'aud claim, when the service is configured with JWT_AUDIENCE')
    .action(async (opts: { app: string; key: string; kid?: string; ttl: string; audience?: string }) => {
      const jwt = await signAppJwt({
        appId: opts.app,
        privateKeyPem: readFileSync(opts.key, 'utf8'),
        ttlSeconds: parseId(opts.ttl, '--ttl'),
        ...(opts.kid !== undefined ? { kid: opts.kid } : {}),
        ...(opts.audience !== undefined ? { audience: opts.audience } : {}),
      });
      process.stdout.write(`${jwt}\n`);
    });
}
