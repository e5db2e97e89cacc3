// `dx proxy-ids create|list|revoke`: onboarding of request-proxy clients (their X-PROXYVID values).
import type { Command } from 'commander';
import { SqlProxyIdStore, type ProxyIdInfo } from '../../domain/identity/proxy-ids.js';
import { output, table, withDatabase, type OutputOptions } from '../context.js';

/** A proxy ID as listed: with when the request proxy last let a request through with it. */
type ListedProxyId = ProxyIdInfo & { lastUsedAt: string | null };

const row = (p: ListedProxyId) => [p.prefix, p.name, p.createdAt, p.lastUsedAt ?? 'never', p.revokedAt];

/** Registers `proxy-ids …` on the program. */
export function registerProxyIdCommands(program: Command): void {
  const ids = program
    .command('proxy-ids')
    .description('onboard request-proxy clients: create, list and revoke their X-PROXYVID values');

  ids
    .command('create')
    .description('create a proxy ID; it is shown once and stored only as a hash')
    .requiredOption('--name <name>', 'who the ID is for (shown in lists; its prefix labels logs and metrics)')
    .option('--json', 'print JSON')
    .action(async (opts: { name: string } & OutputOptions) => {
      const { id, info } = await withDatabase(({ db }) => new SqlProxyIdStore(db).create(opts.name));
      output(opts, { id, ...info }, () => [
        `Proxy ID created for ${info.name}:`,
        '',
        `  X-PROXYVID: ${id}`,
        '',
        'Hand it to the client now: it cannot be shown again (only its prefix is kept in clear).',
        `Revoke it with: dx proxy-ids revoke ${info.prefix}`,
      ]);
    });

  ids
    .command('list')
    .description('list proxy IDs by prefix, with their last use (revoked ones too unless --active)')
    .option('--active', 'only IDs that are not revoked')
    .option('--json', 'print JSON')
    .action(async (opts: { active?: boolean } & OutputOptions) => {
      const list = await withDatabase(async ({ db }): Promise<ListedProxyId[]> => {
        const store = new SqlProxyIdStore(db);
        const [ids, uses] = await Promise.all([
          store.list({ activeOnly: opts.active === true }),
          store.lastUses(),
        ]);
        return ids.map((p) => ({ ...p, lastUsedAt: uses.get(p.prefix) ?? null }));
      });
      output(opts, { data: list, metadata: { count: list.length } }, () =>
        list.length === 0
          ? ['No proxy IDs.']
          : table(['PREFIX', 'NAME', 'CREATED', 'LAST USED', 'REVOKED'], list.map(row)),
      );
    });

  ids
    .command('revoke')
    .description(
      'revoke a proxy ID by its prefix or the full ID; running proxies refuse it within PROXY_ID_REFRESH_MS',
    )
    .argument('<id-or-prefix>', 'the prefix shown by `list` (e.g. pv_AbC4eF9h) or the whole ID')
    .option('--json', 'print JSON')
    .action(async (idOrPrefix: string, opts: OutputOptions) => {
      const info = await withDatabase(({ db }) => new SqlProxyIdStore(db).revoke(idOrPrefix));
      output(opts, info, () => [
        `Proxy ID ${info.prefix} (${info.name}) revoked at ${info.revokedAt ?? ''}.`,
      ]);
    });
}
