// `dx serve` and `dx migrate`.
import type { Command } from 'commander';
import { loadConfig } from '../../config.js';
import { redactUrl } from '../../lib/redact.js';
import { wildcardNote } from '../../lib/listening-url.js';
import { hasApps } from '../../domain/identity/apps.js';
import { openMigrated, output, readSchemaStatus, type OutputOptions } from '../context.js';

/** The exit code of `dx migrate --check` when migrations are pending (1 stays for errors). */
export const EXIT_MIGRATIONS_PENDING = 3;

interface MigrateOptions extends OutputOptions {
  check?: boolean;
}

interface ServeOptions {
  role?: string;
  apiPort?: string;
  proxyPort?: string;
  adminPort?: string;
}

/** Registers `serve` and `migrate` on the program. */
export function registerServeCommands(program: Command): void {
  program
    .command('serve')
    .description('run the service: roles api, worker and proxy, in one process or apart')
    .option(
      '--role <roles>',
      'comma-separated roles (api,worker,proxy); default api,worker (+proxy with UPSTREAM_URL)',
    )
    .option('--api-port <port>', 'API port (API_PORT)')
    .option('--proxy-port <port>', 'proxy port (PROXY_PORT)')
    .option('--admin-port <port>', 'port of /healthz, /readyz and /metrics (ADMIN_PORT)')
    .action(async (opts: ServeOptions) => {
      const config = loadConfig(process.env, {
        ...(opts.role !== undefined ? { ROLES: opts.role } : {}),
        ...(opts.apiPort !== undefined ? { API_PORT: opts.apiPort } : {}),
        ...(opts.proxyPort !== undefined ? { PROXY_PORT: opts.proxyPort } : {}),
        ...(opts.adminPort !== undefined ? { ADMIN_PORT: opts.adminPort } : {}),
      });
      // The server stack (Fastify, schemas) loads only for `serve`, keeping every other command quick.
      const { startService } = await import('../../runtime/service.js');
      const service = await startService(config);
      const log = service.logger;
      const firstApp = service.api !== null && !(await hasApps(service.database.db));
      /** " (every IPv4 interface)" after a wildcard address, so that it is not mistaken for one host. */
      const note = (url: string, before = ' (', after = ')') => {
        const words = wildcardNote(url);
        return words === '' ? '' : `${before}${words}${after}`;
      };
      const banner = [
        `Dataset Exchange Service: roles ${config.roles.join(', ')}; database ${redactUrl(config.databaseUrl)}`,
        ...(service.apiUrl !== null
          ? [
              `API listening on ${service.apiUrl}/api/v1 (${note(service.apiUrl, '', '; ')}public URL ${config.publicUrl}); OpenAPI at /api/v1/openapi.json`,
            ]
          : []),
        ...(firstApp
          ? ['Onboard a first app:  ./bin/dx.js apps create --name "My App" --key-out my-app.pem']
          : []),
        ...(service.proxy !== null
          ? [
              `Proxy listening on ${service.proxy.url}${note(service.proxy.url)} → ${config.upstreamUrl}; onboard a client: ./bin/dx.js proxy-ids create --name "Client"`,
            ]
          : []),
        service.adminUrl === service.apiUrl
          ? `Admin on the API's port: ${service.adminUrl}/healthz, /readyz, /metrics`
          : `Admin listening on ${service.adminUrl}: /healthz, /readyz, /metrics${note(service.adminUrl)}`,
      ];
      let stopping = false;
      const stop = (signal: NodeJS.Signals) => {
        // SIGTERM comes from a supervisor whose load balancers need time to take the process out;
        // SIGINT is a person's Ctrl-C, SIGHUP a closed terminal or a lost starter (bin/node-runtime.js).
        const delayMs = signal === 'SIGTERM' ? config.shutdownDelayMs : 0;
        if (stopping) {
          // A Ctrl-C after SIGTERM cuts the delay short.
          if (delayMs === 0) void service.close({ delayMs });
          return;
        }
        stopping = true;
        log.info({ signal }, 'shutting down');
        const limitMs = delayMs + config.shutdownGraceMs + 5000;
        const force = setTimeout(() => {
          log.error({ limitMs }, 'shutdown took too long; exiting');
          process.exit(1);
        }, limitMs);
        force.unref();
        service.close({ delayMs }).then(
          () => process.exit(0),
          (err: unknown) => {
            log.error({ err }, 'shutdown failed');
            process.exit(1);
          },
        );
      };
      for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
      // Only now: whoever waits for the banner may signal at once.
      process.stderr.write(`${banner.join('\n')}\n`);
    });

  program
    .command('migrate')
    .description('apply pending database migrations and exit')
    .option(
      '--check',
      `apply nothing: exit 0 when the schema is current, ${EXIT_MIGRATIONS_PENDING} when migrations are pending`,
    )
    .option('--json', 'print JSON')
    .action(async (opts: MigrateOptions) => {
      if (opts.check === true) {
        await checkMigrations(opts);
        return;
      }
      const { database, applied } = await openMigrated(loadConfig());
      try {
        output(opts, { applied }, () => [
          applied.length === 0 ? 'Database is up to date.' : `Applied: ${applied.join(', ')}`,
        ]);
      } finally {
        await database.close();
      }
    });
}

/**
 * `dx migrate --check`, for init containers that wait for the migration job: a database migrated
 * further by a newer version counts as current (that version's migrations keep older code working).
 */
async function checkMigrations(opts: OutputOptions): Promise<void> {
  const { pending, unknown } = await readSchemaStatus(loadConfig());
  output(opts, { current: pending.length === 0, pending, unknown }, () => [
    pending.length === 0
      ? 'Database schema is current.'
      : `Pending migrations (run \`dx migrate\`): ${pending.join(', ')}`,
    ...(unknown.length > 0 ? [`Applied by a newer version, unknown to this one: ${unknown.join(', ')}`] : []),
  ]);
  if (pending.length > 0) process.exitCode = EXIT_MIGRATIONS_PENDING;
}
