// `dx operators create`, `dx workspaces invite-owner` and `dx console reset-link`: the command
// line's part of the web console's onboarding and recovery. Links are printed once; only their
// hashes are stored.
import type { Command } from 'commander';
import { consoleDb } from '../../domain/console/db.js';
import { CLI_ACTOR } from '../../domain/console/audit.js';
import {
  createOperatorWithPassword,
  invitationLink,
  inviteMember,
  inviteOperator,
  type Invitation,
} from '../../domain/console/people.js';
import { issueResetLink, resetLink } from '../../domain/console/password-resets.js';
import { problem } from '../../errors.js';
import { output, parseId, withDatabase, type OutputOptions } from '../context.js';

/** Reads all of standard input as text, without its final line break. */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

function showInvitation(
  opts: OutputOptions,
  invitation: Invitation,
  link: string,
  extra: Record<string, unknown>,
): void {
  output(
    opts,
    { ...extra, email: invitation.email, invitationUrl: link, expiresAt: invitation.expiresAt.toISOString() },
    () => [
      `Invitation for ${invitation.email}:`,
      `  ${link}`,
      '',
      `The link works once, until ${invitation.expiresAt.toISOString()}, and is shown only now.`,
    ],
  );
}

/** Registers `operators …`, `workspaces invite-owner` (after registerWorkspaceCommands) and `console …`. */
export function registerConsoleCommands(program: Command): void {
  const operators = program.command('operators').description("the service operator's console accounts");
  operators
    .command('create')
    .description(
      'make an operator account: prints a one-time invitation link, or sets the password from stdin',
    )
    .requiredOption('--email <email>', "the operator's email (the console sign-in name)")
    .option('--password-stdin', 'read the password from standard input instead of printing a link')
    .option('--json', 'print JSON')
    .action(async (opts: { email: string; passwordStdin?: boolean } & OutputOptions) => {
      if (opts.passwordStdin === true) {
        const password = await readStdin();
        const account = await withDatabase(({ db }) =>
          db
            .transaction()
            .execute((trx) => createOperatorWithPassword(consoleDb(trx), CLI_ACTOR, opts.email, password)),
        );
        output(opts, { email: account.email, passwordSet: true }, () => [
          `Operator ${account.email} can now sign in at /console.`,
        ]);
        return;
      }
      await withDatabase(async ({ db }, config) => {
        const invitation = await db
          .transaction()
          .execute((trx) => inviteOperator(consoleDb(trx), CLI_ACTOR, opts.email));
        showInvitation(opts, invitation, invitationLink(config.publicUrl, invitation.token), {});
      });
    });

  const workspaces = program.commands.find((c) => c.name() === 'workspaces');
  if (workspaces === undefined) throw new Error('register the workspaces commands first');
  workspaces
    .command('invite-owner')
    .description("invite a workspace's owner to the console: prints a one-time link, valid 24 hours")
    .requiredOption('--workspace <workspaceId>', 'the workspace')
    .requiredOption('--email <email>', "the owner's email")
    .option('--json', 'print JSON')
    .action(async (opts: { workspace: string; email: string } & OutputOptions) => {
      const workspaceId = parseId(opts.workspace, '--workspace');
      await withDatabase(async ({ db }, config) => {
        const invitation = await db
          .transaction()
          .execute((trx) =>
            inviteMember(consoleDb(trx), CLI_ACTOR, { workspaceId, email: opts.email, role: 'owner' }),
          );
        showInvitation(opts, invitation, invitationLink(config.publicUrl, invitation.token), { workspaceId });
      });
    });

  const consoleAccounts = program.command('console').description("the web console's accounts");
  consoleAccounts
    .command('reset-link')
    .description(
      'issue a one-time password reset link for a console account (valid 1 hour; changes nothing else about the account)',
    )
    .requiredOption('--email <email>', "the account's email (its sign-in name)")
    .option('--json', 'print JSON')
    .action(async (opts: { email: string } & OutputOptions) => {
      await withDatabase(async ({ db }, config) => {
        const link = await db
          .transaction()
          .execute((trx) => issueResetLink(consoleDb(trx), CLI_ACTOR, opts.email));
        if (link === null)
          throw problem('notFound', `No console account has the email ${opts.email.trim()}.`);
        const url = resetLink(config.publicUrl, link.token);
        output(opts, { email: link.email, resetUrl: url, expiresAt: link.expiresAt.toISOString() }, () => [
          `Password reset link for ${link.email}:`,
          `  ${url}`,
          '',
          `The link works once, until ${link.expiresAt.toISOString()}, and is shown only now.`,
          'Using it ends every session of the account; a newer link voids this one.',
        ]);
      });
    });
}
