// `dx apps create|list`, `dx apps keys add|list|revoke` and `dx apps webhook set|show|remove`.
import { readFileSync, writeFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import {
  addAppKey,
  createApp,
  generateKeyPair,
  KEY_ALGORITHMS,
  listAppKeys,
  listApps,
  revokeAppKey,
  type KeyAlgorithm,
} from '../../domain/identity/apps.js';
import { getWebhook, removeWebhook, setWebhook, WEBHOOK_EVENTS } from '../../domain/webhooks/webhooks.js';
import { resolveSigningSecret } from '../../runtime/signing-secret.js';
import { output, table, withDatabase, type OutputOptions } from '../context.js';

const algOption = () => new Option('--alg <alg>', 'key algorithm').choices(KEY_ALGORITHMS).default('RS256');

/** Writes a private key readable by its owner only. */
function writePrivateKey(file: string, pem: string): void {
  writeFileSync(file, pem, { mode: 0o600 });
}

/** Registers `apps …` on the program. */
export function registerAppCommands(program: Command): void {
  const apps = program.command('apps').description('onboard apps (tech partners) and manage their keys');

  apps
    .command('create')
    .description('create an app with a key pair, its own workspace and installation; shows the secrets once')
    .requiredOption('--name <name>', 'the app name')
    .addOption(algOption())
    .option('--key-out <file>', 'write the private key to this file (mode 600) instead of printing it')
    .option('--json', 'print JSON')
    .action(async (opts: { name: string; alg: KeyAlgorithm; keyOut?: string } & OutputOptions) => {
      const keys = await generateKeyPair(opts.alg);
      const created = await withDatabase(({ db }) =>
        db.transaction().execute((trx) => createApp(trx, { name: opts.name, alg: opts.alg, keys })),
      );
      if (opts.keyOut !== undefined) writePrivateKey(opts.keyOut, created.privateKeyPem);
      const result = {
        platformAppId: created.app.id,
        name: created.app.name,
        kid: created.kid,
        alg: created.alg,
        workspaceId: created.workspaceId,
        workspaceKey: created.workspaceKey,
        installationId: created.installationId,
        ...(opts.keyOut !== undefined
          ? { privateKeyFile: opts.keyOut }
          : { privateKeyPem: created.privateKeyPem }),
      };
      output(opts, result, () => [
        `App created: ${created.app.name}`,
        `  platformAppId   ${created.app.id}`,
        `  key id (kid)    ${created.kid} (${created.alg})`,
        `  own workspace   ${created.workspaceId}`,
        `  workspace key   ${created.workspaceKey}`,
        `  installationId  ${created.installationId}`,
        opts.keyOut !== undefined
          ? `  private key     written to ${opts.keyOut}`
          : created.privateKeyPem.trimEnd(),
        '',
        'The private key and the workspace key are shown only now; keep them safe.',
        `Mint an app JWT with: dx token --app ${created.app.id} --key <private-key-file>`,
      ]);
    });

  apps
    .command('list')
    .description('list apps')
    .option('--json', 'print JSON')
    .action(async (opts: OutputOptions) => {
      const rows = await withDatabase(({ db }) => listApps(db));
      const data = rows.map((a) => ({
        platformAppId: a.id,
        name: a.name,
        ownWorkspaceId: a.owner_workspace_id,
        dateCreated: a.created_at,
      }));
      output(opts, data, () =>
        table(
          ['platformAppId', 'name', 'own workspace', 'created'],
          data.map((a) => [a.platformAppId, a.name, a.ownWorkspaceId, a.dateCreated]),
        ),
      );
    });

  const keys = apps
    .command('keys')
    .description("manage an app's public keys (several at once allow rotation)");
  keys
    .command('add <appId>')
    .description('add a key: generate a pair (private key shown once) or register a public key file')
    .addOption(algOption())
    .option('--public-key <file>', 'a PEM public key (SPKI) to register instead of generating a pair')
    .option('--key-out <file>', 'write the generated private key to this file (mode 600)')
    .option('--json', 'print JSON')
    .action(
      async (
        appId: string,
        opts: { alg: KeyAlgorithm; publicKey?: string; keyOut?: string } & OutputOptions,
      ) => {
        const pair = opts.publicKey === undefined ? await generateKeyPair(opts.alg) : null;
        const publicKeyPem = pair?.publicKeyPem ?? readFileSync(opts.publicKey ?? '', 'utf8');
        const key = await withDatabase(({ db }) => addAppKey(db, appId, opts.alg, publicKeyPem));
        if (pair !== null && opts.keyOut !== undefined) writePrivateKey(opts.keyOut, pair.privateKeyPem);
        const showKey = pair !== null && opts.keyOut === undefined;
        output(
          opts,
          { kid: key.kid, alg: key.alg, ...(showKey ? { privateKeyPem: pair.privateKeyPem } : {}) },
          () => [
            `Key added: ${key.kid} (${key.alg})`,
            ...(showKey ? [pair.privateKeyPem.trimEnd(), 'The private key is shown only now.'] : []),
          ],
        );
      },
    );
  keys
    .command('list <appId>')
    .description("list an app's keys")
    .option('--json', 'print JSON')
    .action(async (appId: string, opts: OutputOptions) => {
      const rows = await withDatabase(({ db }) => listAppKeys(db, appId));
      const data = rows.map((k) => ({
        kid: k.kid,
        alg: k.alg,
        dateCreated: k.created_at,
        dateRevoked: k.revoked_at,
      }));
      output(opts, data, () =>
        table(
          ['kid', 'alg', 'created', 'revoked'],
          data.map((k) => [k.kid, k.alg, k.dateCreated, k.dateRevoked]),
        ),
      );
    });
  keys
    .command('revoke <appId> <kid>')
    .description(
      'revoke a key: JWTs signed with it, and the access tokens they minted, are refused from now on',
    )
    .option('--json', 'print JSON')
    .action(async (appId: string, kid: string, opts: OutputOptions) => {
      await withDatabase(({ db }) => revokeAppKey(db, appId, kid));
      output(opts, { kid, revoked: true }, () => [`Key ${kid} revoked.`]);
    });

  const webhook = apps
    .command('webhook')
    .description("manage an app's webhook (job events, signed with a secret shown once)");
  webhook
    .command('set <appId> <url>')
    .description('set (or replace) the webhook URL with a new secret, shown only now')
    .option(
      '--events <events>',
      `comma-separated, among ${WEBHOOK_EVENTS.join(', ')} (default: the dataset.job.* events)`,
    )
    .option('--json', 'print JSON')
    .action(async (appId: string, url: string, opts: OutputOptions & { events?: string }) => {
      const hook = await withDatabase(({ db }, config) =>
        setWebhook(db, appId, url, {
          signingSecret: resolveSigningSecret(config),
          allowlist: config.webhooks.urlAllowlist,
          ...(opts.events !== undefined ? { events: opts.events.split(',').map((e) => e.trim()) } : {}),
        }),
      );
      output(opts, hook, () => [
        `Webhook set for ${appId}: ${hook.url}`,
        `  events  ${hook.events.join(', ')}`,
        `  secret  ${hook.secret}`,
        '',
        'The secret is shown only now; the app verifies X-DX-Signature-256 with it.',
      ]);
    });
  webhook
    .command('show <appId>')
    .description("show the app's webhook URL and events (never its secret)")
    .option('--json', 'print JSON')
    .action(async (appId: string, opts: OutputOptions) => {
      const hook = await withDatabase(({ db }) => getWebhook(db, appId));
      output(opts, hook, () => [
        `${hook.url}`,
        `  events   ${hook.events.join(', ')}`,
        `  updated  ${hook.dateUpdated}`,
      ]);
    });
  webhook
    .command('remove <appId>')
    .description('remove the webhook and its deliveries')
    .option('--json', 'print JSON')
    .action(async (appId: string, opts: OutputOptions) => {
      await withDatabase(({ db }) => removeWebhook(db, appId));
      output(opts, { appId, removed: true }, () => [`Webhook of ${appId} removed.`]);
    });
}
