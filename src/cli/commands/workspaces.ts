// `dx workspaces create|list|rotate-key` and `dx installations create|list|remove`.
import { Option, type Command } from 'commander';
import {
  createWorkspace,
  listWorkspaces,
  WORKSPACE_TYPES,
  type WorkspaceType,
} from '../../domain/identity/workspaces.js';
import { getInstallation, listInstallations } from '../../domain/identity/installations.js';
import { connectAppAudited, removeInstallationAudited } from '../../domain/console/connected-apps.js';
import { CLI_ACTOR } from '../../domain/console/audit.js';
import { consoleDb } from '../../domain/console/db.js';
import { rotateKeyAudited } from '../../domain/console/workspace-key.js';
import { output, parseId, table, withDatabase, type OutputOptions } from '../context.js';

/** Registers `workspaces …` on the program. */
export function registerWorkspaceCommands(program: Command): void {
  const ws = program.command('workspaces').description('onboard workspaces (campaigns, organizations)');
  ws.command('create')
    .description('create a workspace; shows its Workspace ID and Workspace Key once')
    .requiredOption('--name <name>', 'display name')
    .option('--owner-name <name>', "owner user's display name")
    .option('--owner-email <email>', "owner user's email", '')
    .addOption(
      new Option('--type <type>', 'what kind of body the workspace is')
        .choices(WORKSPACE_TYPES)
        .default('Organization'),
    )
    .option('--json', 'print JSON')
    .action(
      async (
        opts: { name: string; ownerName?: string; ownerEmail: string; type: WorkspaceType } & OutputOptions,
      ) => {
        const { workspace, workspaceKey } = await withDatabase(({ db }) =>
          db.transaction().execute((trx) =>
            createWorkspace(trx, {
              displayName: opts.name,
              ownerName: opts.ownerName ?? opts.name,
              ownerEmail: opts.ownerEmail,
              type: opts.type,
            }),
          ),
        );
        const shown = {
          workspaceId: workspace.id,
          displayName: workspace.display_name,
          type: workspace.type,
          workspaceKey,
        };
        output(opts, shown, () => [
          `Workspace created: ${workspace.display_name} (${workspace.type})`,
          `  workspaceId    ${workspace.id}`,
          `  workspaceKey   ${workspaceKey}`,
          '',
          'The Workspace Key is shown only now. Hand the ID and key to the app developer to connect.',
        ]);
      },
    );
  ws.command('list')
    .description('list workspaces')
    .option('--json', 'print JSON')
    .action(async (opts: OutputOptions) => {
      const rows = await withDatabase(({ db }) => listWorkspaces(db));
      const data = rows.map((w) => ({
        workspaceId: w.id,
        displayName: w.display_name,
        type: w.type,
        dateCreated: w.created_at,
      }));
      output(opts, data, () =>
        table(
          ['workspaceId', 'name', 'type', 'created'],
          data.map((w) => [w.workspaceId, w.displayName, w.type, w.dateCreated]),
        ),
      );
    });
  ws.command('rotate-key <workspaceId>')
    .description('replace the Workspace Key; access tokens minted with the old key stop working at once')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: OutputOptions) => {
      const workspaceId = parseId(id, 'workspaceId');
      // The same rotation as the console's, so the workspace's audit log shows it too.
      // Whatever the key's version: a rotation asked for by the operator is never stale.
      const workspaceKey = await withDatabase(({ db }) =>
        db.transaction().execute((trx) => rotateKeyAudited(consoleDb(trx), CLI_ACTOR, workspaceId, null)),
      );
      if (workspaceKey === null) throw new Error('a rotation of any version was refused');
      output(opts, { workspaceId, workspaceKey }, () => [
        `New Workspace Key for ${workspaceId}: ${workspaceKey}`,
        'Shown only now.',
      ]);
    });
}

/** Registers `installations …` on the program. */
export function registerInstallationCommands(program: Command): void {
  const inst = program.command('installations').description('connect apps to workspaces');
  inst
    .command('create')
    .description('connect an app to a workspace (idempotent)')
    .requiredOption('--app <platformAppId>', 'the app')
    .requiredOption('--workspace <workspaceId>', 'the workspace')
    .option('--json', 'print JSON')
    .action(async (opts: { app: string; workspace: string } & OutputOptions) => {
      const workspaceId = parseId(opts.workspace, '--workspace');
      // The console's connect (connectInstallation, audited); connecting twice is not an error here.
      const installation = await withDatabase(async ({ db }) => {
        const { app } = await db
          .transaction()
          .execute((trx) => connectAppAudited(consoleDb(trx), CLI_ACTOR, workspaceId, opts.app));
        return getInstallation(db, app.installationId);
      });
      output(opts, installation, () => [
        `Installation ${installation.installationId}: app ${installation.platformAppId} ↔ workspace ${installation.workspaceId}`,
      ]);
    });
  inst
    .command('list')
    .description('list installations')
    .option('--app <platformAppId>', 'only those of one app')
    .option('--json', 'print JSON')
    .action(async (opts: { app?: string } & OutputOptions) => {
      const data = await withDatabase(({ db }) =>
        listInstallations(db, opts.app !== undefined ? { appId: opts.app } : {}),
      );
      output(opts, data, () =>
        table(
          ['installationId', 'platformAppId', 'workspaceId', 'name', 'created'],
          data.map((i) => [i.installationId, i.platformAppId, i.workspaceId, i.name, i.dateCreated]),
        ),
      );
    });
  inst
    .command('remove <installationId>')
    .description('disconnect; its access tokens stop working at once')
    .option('--json', 'print JSON')
    .action(async (id: string, opts: OutputOptions) => {
      const installationId = parseId(id, 'installationId');
      await withDatabase(({ db }) =>
        db
          .transaction()
          .execute((trx) => removeInstallationAudited(consoleDb(trx), CLI_ACTOR, installationId)),
      );
      output(opts, { installationId, removed: true }, () => [`Installation ${installationId} removed.`]);
    });
}
