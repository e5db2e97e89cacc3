// `dx proxy-ids` in a real process against a real SQLite file, and the ID it prints working at the proxy.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { SqlProxyIdStore } from '../../src/domain/identity/proxy-ids.js';
import { openDatabase } from '../../src/storage/db/database.js';
import { AUTH, call, startStack } from './stack.js';

const commands = fileURLToPath(new URL('../../src/cli/commands/proxy-ids.js', import.meta.url));
// The lead's main.ts registers the commands; here a minimal program does, so the test needs only them.
const runner = `
import { Command } from 'commander';
const { registerProxyIdCommands } = await import(process.env.COMMANDS);
const program = new Command('dx').exitOverride();
registerProxyIdCommands(program);
try { await program.parseAsync(process.argv.slice(1), { from: 'user' }); }
catch (err) { process.stderr.write('dx: ' + err.message + '\\n'); process.exitCode = 1; }
`;

void describe('dx proxy-ids', () => {
  let dir: string;
  let env: NodeJS.ProcessEnv;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'dx-proxy-cli-'));
    env = {
      ...process.env,
      DATABASE_URL: `sqlite:${join(dir, 'dx.sqlite')}`,
      DATA_DIR: dir,
      COMMANDS: commands,
    };
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const dx = async (...args: string[]) => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--input-type=module', '-e', runner, '--', ...args],
      { env, cwd: fileURLToPath(new URL('../../..', import.meta.url)) },
    );
    return stdout;
  };

  void it('create prints the ID once; list shows prefixes only; revoke by prefix', async () => {
    const created = JSON.parse(await dx('proxy-ids', 'create', '--name', 'Acme Dialer', '--json')) as {
      id: string;
      prefix: string;
      name: string;
    };
    assert.match(created.id, /^pv_[A-Za-z0-9_-]{32}$/);
    assert.equal(created.prefix, created.id.slice(0, 11));
    assert.equal(created.name, 'Acme Dialer');

    const human = await dx('proxy-ids', 'create', '--name', 'Second');
    assert.match(human, /X-PROXYVID: pv_[A-Za-z0-9_-]{32}/);
    assert.match(human, /cannot be shown again/);

    const listText = await dx('proxy-ids', 'list');
    assert.match(listText, /PREFIX\s+NAME\s+CREATED\s+LAST USED\s+REVOKED/);
    assert.match(listText, new RegExp(`${created.prefix}\\s+Acme Dialer\\s+\\S+\\s+never`));
    assert.ok(listText.includes(created.prefix));
    assert.ok(!listText.includes(created.id), 'the list never shows a full ID');
    const list = JSON.parse(await dx('proxy-ids', 'list', '--json')) as {
      data: unknown[];
      metadata: { count: number };
    };
    assert.equal(list.metadata.count, 2);
    assert.ok(!JSON.stringify(list).includes(created.id));

    const revoked = JSON.parse(await dx('proxy-ids', 'revoke', created.prefix, '--json')) as Record<
      string,
      unknown
    >;
    assert.equal(revoked.prefix, created.prefix);
    assert.equal(typeof revoked.revokedAt, 'string');
    const active = JSON.parse(await dx('proxy-ids', 'list', '--active', '--json')) as {
      metadata: { count: number };
    };
    assert.equal(active.metadata.count, 1);
  });

  void it('revoke of an unknown prefix fails with a clear message', async () => {
    await assert.rejects(dx('proxy-ids', 'revoke', 'pv_nothere'), /No proxy ID matches/);
  });

  void it('an ID created by the CLI is accepted by a running proxy', async () => {
    const s = await startStack();
    try {
      const file = (s.database.engine as { file: string }).file;
      const out = await promisify(execFile)(
        process.execPath,
        ['--input-type=module', '-e', runner, '--', 'proxy-ids', 'create', '--name', 'cli', '--json'],
        {
          env: { ...env, DATABASE_URL: `sqlite:${file}` },
          cwd: fileURLToPath(new URL('../../..', import.meta.url)),
        },
      );
      const { id } = JSON.parse(out.stdout) as { id: string };
      const r = await call(`${s.proxy.url}/v4/echoes`, {
        headers: { authorization: AUTH, 'x-proxyvid': id },
      });
      assert.equal(r.status, 200);
      // The proxy writes the use beside the request: the list shows it once written.
      const prefix = id.slice(0, 11);
      let listed: { prefix: string; lastUsedAt: string | null } | undefined;
      for (let i = 0; i < 100 && !(listed?.lastUsedAt ?? null); i++) {
        if (i > 0) await new Promise((resolve) => setTimeout(resolve, 50));
        const list = await promisify(execFile)(
          process.execPath,
          ['--input-type=module', '-e', runner, '--', 'proxy-ids', 'list', '--json'],
          {
            env: { ...env, DATABASE_URL: `sqlite:${file}` },
            cwd: fileURLToPath(new URL('../../..', import.meta.url)),
          },
        );
        const { data } = JSON.parse(list.stdout) as { data: { prefix: string; lastUsedAt: string | null }[] };
        listed = data.find((p) => p.prefix === prefix);
      }
      assert.match(String(listed?.lastUsedAt), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
      const db = await openDatabase(`sqlite:${file}`);
      assert.equal((await new SqlProxyIdStore(db.db).list()).length, 2);
      await db.close();
    } finally {
      await s.close();
    }
  });
});
