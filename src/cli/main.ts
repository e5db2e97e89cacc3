// The `dx` command line: serving, migrations and onboarding, each command with --help.
import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config.js';
import { ProblemError } from '../errors.js';
import { registerAppCommands } from './commands/apps.js';
import { registerServeCommands } from './commands/serve.js';
import { registerTokenCommand } from './commands/token.js';
import { registerUploadCommand } from './commands/upload.js';
import { registerProxyIdCommands } from './commands/proxy-ids.js';
import { registerInstallationCommands, registerWorkspaceCommands } from './commands/workspaces.js';

/** Builds the program; exported so tests can run commands in-process. */
export function buildProgram(): Command {
  const program = new Command('dx')
    .description('Dataset Exchange Service and Request Proxy')
    .showHelpAfterError()
    .exitOverride();
  registerServeCommands(program);
  registerAppCommands(program);
  registerWorkspaceCommands(program);
  registerInstallationCommands(program);
  registerTokenCommand(program);
  registerUploadCommand(program);
  registerProxyIdCommands(program);
  return program;
}

/** Runs the CLI with the process arguments; prints errors as one clear line and sets the exit code. */
export async function main(argv: string[] = process.argv): Promise<void> {
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
