// The `dx` command line: serving, migrations and onboarding, each command with --help.
import { packageVersion } from '../lib/version.js';
import { Command, CommanderError, Help, type Option } from 'commander';
import { ConfigError } from '../config.js';
import { ProblemError } from '../errors.js';
import { registerAppCommands } from './commands/apps.js';
import { registerChangesCommand } from './commands/changes.js';
import { registerConsoleCommands } from './commands/console.js';
import { registerServeCommands } from './commands/serve.js';
import { registerTokenCommand } from './commands/token.js';
import { registerUploadCommand } from './commands/upload.js';
import { registerProxyIdCommands } from './commands/proxy-ids.js';
import { registerInstallationCommands, registerWorkspaceCommands } from './commands/workspaces.js';

/** Builds the program; exported so tests can run commands in-process. */
export function buildProgram(): Command {
  const program = new Command('dx')
    .description('Dataset Exchange Service and Request Proxy')
    .version(packageVersion(), '-V, --version', 'print the version')
    .showHelpAfterError()
    .exitOverride()
    // Set before the commands are added, which inherit it: --help marks the options they require.
    .configureHelp({
      optionDescription(this: Help, option: Option) {
        const text = Help.prototype.optionDescription.call(this, option);
        return option.mandatory ? `${text} (required)` : text;
      },
    });
  registerServeCommands(program);
  registerAppCommands(program);
  registerWorkspaceCommands(program);
  registerInstallationCommands(program);
  registerTokenCommand(program);
  registerUploadCommand(program);
  registerChangesCommand(program);
  registerProxyIdCommands(program);
  registerConsoleCommands(program);
  return program;
}

/**
 * Files the service makes hold every tenant's records and secrets: readable by its own user only
 * (folders 0700, files 0600), whatever umask the shell had. SQLite's own files (WAL, journal) are
 * made by the driver, so the process-wide mask is what reaches them.
 */
export const PRIVATE_UMASK = 0o077;

/** Runs the CLI with the process arguments; prints errors as one clear line and sets the exit code. */
export async function main(argv: string[] = process.argv): Promise<void> {
  process.umask(PRIVATE_UMASK);
  try {
    await buildProgram().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    process.exitCode = 1;
    if (err instanceof ConfigError || err instanceof ProblemError)
      process.stderr.write(`dx: ${err.message}\n`);
    else if (err instanceof Error) process.stderr.write(`dx: ${err.message}\n`);
    else process.stderr.write(`dx: ${String(err)}\n`);
  }
}

await main();
