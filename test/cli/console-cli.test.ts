// The console's onboarding commands, spawned as the operator runs them, on SQLite and PostgreSQL:
// `dx operators create` and `dx workspaces invite-owner` print one-time links that the console
// accepts; --password-stdin sets the operator's password directly; `dx console reset-link` prints
// a one-time password reset link that makes no one an operator.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { ConsoleBrowser, csrfOf } from '../support/console-browser.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'dx.js');
const PASSWORD = 'a long enough passphrase';

await forEachDatabase('dx console commands', (target) => {
  let t: Fixture;
  let env: NodeJS.ProcessEnv;
  const dx = async (...args: string[]) => run(process.execPath, [BIN, ...args], { env });

  /** Runs dx with `input` on standard input. */
  const dxWithInput = (input: string, ...args: string[]) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(process.execPath, [BIN, ...args], { env });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
      child.stdin.end(input);
    });

  before(async () => {
    t = await startFixture(target, { ROLES: 'api' });
    env = { ...process.env, ...t.processEnv, LOG_LEVEL: 'silent', PUBLIC_URL: 'https://dx.example.org' };
  });
  after(() => t.close());

  const pathOf = (link: string) => {
    const u = new URL(link);
    return `${u.pathname}${u.search}`;
  };

  test('the new commands have --help', async () => {
    for (const c of [
      ['operators', 'create'],
      ['workspaces', 'invite-owner'],
      ['console', 'reset-link'],
    ]) {
      const { stdout } = await dx(...c, '--help');
      assert.match(stdout, /^Usage: dx/m, c.join(' '));
    }
  });

  test('workspaces invite-owner prints a one-time link the owner accepts, then signs in', async () => {
    const ws = JSON.parse((await dx('workspaces', 'create', '--name', 'Riverside', '--json')).stdout) as {
      workspaceId: number;
    };
    const { stdout } = await dx(
      'workspaces',
      'invite-owner',
      '--workspace',
      String(ws.workspaceId),
      '--email',
      'Owner@Example.org',
    );
    const link = /https:\/\/dx\.example\.org\/console\/invitation\?token=dxi_\S+/.exec(stdout)?.[0];
    assert.ok(link !== undefined, stdout);
    assert.match(stdout, /works once/);
    const b = new ConsoleBrowser(() => t.app);
    assert.equal((await b.accept(link, 'Rita', PASSWORD)).statusCode, 303);
    assert.equal((await b.signIn('owner@example.org', PASSWORD)).statusCode, 303);
    const page = await b.get(`/console/workspaces/${ws.workspaceId}`);
    assert.match(page.body, new RegExp(`<code id="workspace-id"[^>]*>${ws.workspaceId}</code>`));
    // The link was spent.
    assert.equal((await new ConsoleBrowser(() => t.app).get(pathOf(link))).statusCode, 410);
    // An unknown workspace is a clear error.
    await assert.rejects(
      dx('workspaces', 'invite-owner', '--workspace', '999999', '--email', 'x@example.org'),
      (err: { stderr: string }) => /does not exist/.test(err.stderr),
    );
  });

  test('operators create prints a link, or sets the password from standard input', async () => {
    const json = JSON.parse(
      (await dx('operators', 'create', '--email', 'op1@example.org', '--json')).stdout,
    ) as {
      invitationUrl: string;
      expiresAt: string;
    };
    const hours = (Date.parse(json.expiresAt) - Date.now()) / 3_600_000;
    assert.ok(hours > 23.9 && hours <= 24, String(hours));
    const b = new ConsoleBrowser(() => t.app);
    assert.equal((await b.accept(json.invitationUrl, 'Op One', PASSWORD)).statusCode, 303);
    assert.equal((await b.signIn('op1@example.org', PASSWORD)).statusCode, 303);
    assert.match((await b.get('/console/home')).body, /All workspaces/);

    const set = await dxWithInput(
      `${PASSWORD}\n`,
      'operators',
      'create',
      '--email',
      'op2@example.org',
      '--password-stdin',
    );
    assert.equal(set.code, 0, set.stderr);
    assert.ok(!set.stdout.includes(PASSWORD));
    assert.equal((await new ConsoleBrowser(() => t.app).signIn('op2@example.org', PASSWORD)).statusCode, 303);

    const weak = await dxWithInput(
      'short\n',
      'operators',
      'create',
      '--email',
      'op3@example.org',
      '--password-stdin',
    );
    assert.equal(weak.code, 1);
    assert.match(weak.stderr, /at least 12 characters/);
  });

  test('console reset-link prints a one-time reset link; using it sets the password and grants nothing else', async () => {
    const ws = JSON.parse((await dx('workspaces', 'create', '--name', 'Lakeside', '--json')).stdout) as {
      workspaceId: number;
    };
    const invited = JSON.parse(
      (
        await dx(
          'workspaces',
          'invite-owner',
          '--workspace',
          String(ws.workspaceId),
          '--email',
          'forgetful@example.org',
          '--json',
        )
      ).stdout,
    ) as { invitationUrl: string };
    assert.equal(
      (await new ConsoleBrowser(() => t.app).accept(invited.invitationUrl, 'Fay', PASSWORD)).statusCode,
      303,
    );

    const { stdout } = await dx('console', 'reset-link', '--email', 'Forgetful@Example.org');
    const link = /https:\/\/dx\.example\.org\/console\/reset-password\?token=dxr_\S+/.exec(stdout)?.[0];
    assert.ok(link !== undefined, stdout);
    assert.match(stdout, /works once/);
    const json = JSON.parse(
      (await dx('console', 'reset-link', '--email', 'forgetful@example.org', '--json')).stdout,
    ) as {
      resetUrl: string;
      expiresAt: string;
      email: string;
    };
    assert.equal(json.email, 'forgetful@example.org');
    const minutes = (Date.parse(json.expiresAt) - Date.now()) / 60_000;
    assert.ok(minutes > 59 && minutes <= 60, String(minutes));

    const b = new ConsoleBrowser(() => t.app);
    // The newer link voided the first one.
    assert.equal((await b.get(pathOf(link))).statusCode, 410);
    const page = await b.get(pathOf(json.resetUrl));
    assert.equal(page.statusCode, 200);
    const set = await b.post('/console/reset-password', {
      _csrf: csrfOf(page.body),
      token: new URL(json.resetUrl).searchParams.get('token')!,
      password: 'a fresh passphrase here',
      confirm: 'a fresh passphrase here',
    });
    assert.equal(set.statusCode, 303);
    assert.equal((await b.signIn('forgetful@example.org', 'a fresh passphrase here')).statusCode, 303);
    // An owner still, and not an operator (the old way back, operators create, made one).
    assert.doesNotMatch((await b.get('/console/home')).body, /All workspaces/);
    assert.equal((await b.get('/console/operator')).statusCode, 404);

    await assert.rejects(
      dx('console', 'reset-link', '--email', 'nobody@example.org'),
      (err: { stderr: string; code: number }) =>
        err.code === 1 && /No console account has the email/.test(err.stderr),
    );
  });
});
