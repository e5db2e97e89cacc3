// The dx CLI through its public interface: spawned as a user would run it, against SQLite and PostgreSQL.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { createServer, type AddressInfo } from 'node:net';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { forEachDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { consoleDb } from '../../src/domain/console/db.js';

const run = promisify(execFile);
const BIN = join(process.cwd(), 'bin', 'dx.js');

await forEachDatabase('dx CLI', (target) => {
  // The CLI works on the database and files of a service that answers the API over them.
  let service: Fixture;
  let env: NodeJS.ProcessEnv;
  const dx = async (...args: string[]) => run(process.execPath, [BIN, ...args], { env });
  const dxJson = async <T>(...args: string[]): Promise<T> =>
    JSON.parse((await dx(...args, '--json')).stdout) as T;

  before(async () => {
    service = await startFixture(target, { ROLES: 'api' });
    env = { ...process.env, ...service.processEnv, LOG_LEVEL: 'silent' };
  });
  after(() => service.close());

  test('every command has --help', async () => {
    const commands = [
      [],
      ['serve'],
      ['migrate'],
      ['apps'],
      ['apps', 'create'],
      ['apps', 'list'],
      ['apps', 'keys'],
      ['apps', 'keys', 'add'],
      ['apps', 'keys', 'list'],
      ['apps', 'keys', 'revoke'],
      ['workspaces', 'create'],
      ['workspaces', 'list'],
      ['workspaces', 'rotate-key'],
      ['installations', 'create'],
      ['installations', 'list'],
      ['installations', 'remove'],
      ['token'],
    ];
    for (const c of commands) {
      const { stdout } = await dx(...c, '--help');
      assert.match(stdout, /^Usage: dx/m, c.join(' '));
    }
  });

  test('onboarding end to end: app, workspace, installation, JWT accepted by the API', async () => {
    const keyFile = join(service.config.dataDir, 'app.pem');
    const app = await dxJson<{
      platformAppId: string;
      kid: string;
      workspaceId: number;
      installationId: number;
      workspaceKey: string;
    }>('apps', 'create', '--name', 'CLI App', '--key-out', keyFile);
    assert.match(app.platformAppId, /^[0-9a-f-]{36}$/);
    assert.match(app.workspaceKey, /^wsk_/);
    const ws = await dxJson<{ workspaceId: number; workspaceKey: string }>(
      'workspaces',
      'create',
      '--name',
      'Campaign',
    );
    const inst = await dxJson<{ installationId: number; workspaceId: number }>(
      'installations',
      'create',
      '--app',
      app.platformAppId,
      '--workspace',
      String(ws.workspaceId),
    );
    assert.equal(inst.workspaceId, ws.workspaceId);
    const listed = await dxJson<{ installationId: number }[]>(
      'installations',
      'list',
      '--app',
      app.platformAppId,
    );
    assert.deepEqual(
      listed.map((i) => i.installationId).sort(),
      [app.installationId, inst.installationId].sort(),
    );

    // The minted JWT is accepted by a server on the same database.
    const jwt = (
      await dx('token', '--app', app.platformAppId, '--key', keyFile, '--kid', app.kid)
    ).stdout.trim();
    const res = await service.app.inject({
      url: '/api/v1/apps/me/installations',
      headers: { authorization: `Bearer ${jwt}` },
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.json().metadata.count, 2);

    const removed = await dxJson<{ removed: boolean }>(
      'installations',
      'remove',
      String(inst.installationId),
    );
    assert.equal(removed.removed, true);
    const rotated = await dxJson<{ workspaceKey: string }>(
      'workspaces',
      'rotate-key',
      String(ws.workspaceId),
    );
    assert.notEqual(rotated.workspaceKey, ws.workspaceKey);
    // Written to the workspace's audit log, which its owners read in the console.
    const logged = await consoleDb(service.database.db)
      .selectFrom('console_audit')
      .select(['action', 'actor', 'detail'])
      .where('workspace_id', '=', ws.workspaceId)
      .orderBy('id')
      .execute();
    assert.deepEqual(logged, [
      { action: 'app.connected', actor: 'cli', detail: `CLI App (${app.platformAppId})` },
      { action: 'app.disconnected', actor: 'cli', detail: `CLI App (${app.platformAppId})` },
      { action: 'workspace_key.rotated', actor: 'cli', detail: 'key version 2' },
    ]);
  });

  test('keys: add, list, revoke', async () => {
    const app = await dxJson<{ platformAppId: string; kid: string }>(
      'apps',
      'create',
      '--name',
      'Keys',
      '--alg',
      'ES256',
      '--key-out',
      join(service.config.dataDir, 'k.pem'),
    );
    const added = await dxJson<{ kid: string; privateKeyPem: string }>(
      'apps',
      'keys',
      'add',
      app.platformAppId,
    );
    assert.match(added.privateKeyPem, /BEGIN PRIVATE KEY/);
    await dx('apps', 'keys', 'revoke', app.platformAppId, app.kid);
    const keys = await dxJson<{ kid: string; dateRevoked: string | null }[]>(
      'apps',
      'keys',
      'list',
      app.platformAppId,
    );
    assert.equal(keys.length, 2);
    assert.notEqual(keys.find((k) => k.kid === app.kid)?.dateRevoked, null);
    assert.equal(keys.find((k) => k.kid === added.kid)?.dateRevoked, null);
  });

  test('mistakes exit non-zero with one clear message', async () => {
    await assert.rejects(dx('installations', 'remove', '999999'), (err: { code: number; stderr: string }) => {
      assert.equal(err.code, 1);
      assert.match(err.stderr, /Installation 999999 does not exist/);
      return true;
    });
    await assert.rejects(dx('workspaces', 'rotate-key', 'abc'), /workspaceId must be a positive integer/);
    await assert.rejects(
      dx('installations', 'create', '--app', 'no-such-app', '--workspace', '1'),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /App no-such-app does not exist/);
        return true;
      },
    );
    await assert.rejects(dx('apps', 'create'), /required option '--name <name>'/);
    // Names follow the identity domain's one rule, as in the console.
    await assert.rejects(dx('apps', 'create', '--name', '  '), /Enter an app name of 1 to 200 characters/);
    await assert.rejects(
      dx('workspaces', 'create', '--name', 'x'.repeat(201)),
      /Enter a workspace name of 1 to 200 characters/,
    );
    await assert.rejects(dx('proxy-ids', 'create', '--name', ''), /Enter who the proxy ID is for/);
    await assert.rejects(
      run(process.execPath, [BIN, 'migrate'], {
        env: { ...env, API_PORT: 'eighty', DATABASE_URL: 'mysql://x' },
      }),
      (err: { stderr: string }) => {
        assert.match(err.stderr, /API_PORT/);
        assert.match(err.stderr, /DATABASE_URL/);
        return true;
      },
    );
  });
});

describe('dx files on disk', () => {
  test('DATA_DIR is made 0700 and the SQLite files 0600, whatever the umask', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dx-modes-'));
    try {
      const dataDir = join(root, 'data');
      const old = process.umask(0o022); // a shell's usual mask, which the child inherits
      try {
        await run(process.execPath, [BIN, 'migrate'], {
          env: { ...process.env, DATA_DIR: dataDir, DATABASE_URL: '', LOG_LEVEL: 'silent' },
        });
      } finally {
        process.umask(old);
      }
      assert.equal(statSync(dataDir).mode & 0o777, 0o700);
      const files = readdirSync(dataDir).filter((f) => f.startsWith('dx.sqlite'));
      assert.ok(files.includes('dx.sqlite'), files.join(','));
      for (const f of files) assert.equal(statSync(join(dataDir, f)).mode & 0o777, 0o600, f);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

describe('dx for a newcomer', () => {
  const dxIn = (cwd: string, env: NodeJS.ProcessEnv, ...args: string[]) =>
    run(process.execPath, [BIN, ...args], { cwd, env: { ...process.env, LOG_LEVEL: 'silent', ...env } });

  test('--version prints the package version', async () => {
    const pkg = JSON.parse(readFileSync(join(process.cwd(), 'package.json'), 'utf8')) as { version: string };
    const { stdout } = await dxIn(process.cwd(), {}, '--version');
    assert.equal(stdout, `${pkg.version}\n`);
  });

  test('token checks --ttl and the key file before signing', async () => {
    await assert.rejects(
      dxIn(process.cwd(), {}, 'token', '--app', 'a', '--key', 'missing.pem', '--ttl', '99999'),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(err.stderr, /--ttl must be at most 3600 seconds/);
        return true;
      },
    );
    await assert.rejects(
      dxIn(process.cwd(), {}, 'token', '--app', 'a', '--key', 'missing.pem'),
      /cannot read the --key file missing\.pem \(ENOENT\)/,
    );
    // A file that is not a private key is named as such, not with OpenSSL's decoder error.
    const root = mkdtempSync(join(tmpdir(), 'dx-key-'));
    try {
      const notKey = join(root, 'notes.txt');
      writeFileSync(notKey, 'not a key\n');
      const publicKey = join(root, 'public.pem');
      writeFileSync(
        publicKey,
        generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ type: 'spki', format: 'pem' }),
      );
      const otherType = join(root, 'ed25519.pem');
      writeFileSync(
        otherType,
        generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }),
      );
      for (const [file, message] of [
        [
          notKey,
          /^dx: the --key file \S+notes\.txt is not a PEM private key \(-----BEGIN PRIVATE KEY-----\); use the PEM file `dx apps create --key-out` wrote\n$/,
        ],
        [publicKey, /^dx: the --key file \S+public\.pem holds a public key; it takes the app's private key/],
        [
          otherType,
          /^dx: the --key file \S+ed25519\.pem holds a key of type ed25519; app keys are RSA \(RS256\) or EC P-256 \(ES256\)\n$/,
        ],
      ] as const) {
        await assert.rejects(
          dxIn(process.cwd(), {}, 'token', '--app', 'a', '--key', file),
          (err: { code: number; stderr: string }) => {
            assert.equal(err.code, 1);
            assert.match(err.stderr, message);
            assert.doesNotMatch(err.stderr, /DECODER|routines|error:/);
            return true;
          },
        );
      }
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('--help marks the options a command requires', async () => {
    const { stdout } = await dxIn(process.cwd(), {}, 'token', '--help');
    assert.match(stdout, /^ {2}--app <platformAppId> +the app \(iss claim\) \(required\)$/m);
    assert.match(stdout, /^ {2}--key <file> +PEM private key file \(required\)$/m);
    assert.doesNotMatch(stdout, /--kid[^\n]*required/);
    const create = await dxIn(process.cwd(), {}, 'workspaces', 'create', '--help');
    assert.match(create.stdout, /^ {2}--name <name> +display name \(required\)$/m);
    assert.doesNotMatch(create.stdout, /--owner-name[^\n]*required/);
  });

  test('a command that creates a new SQLite database says where; an existing one is opened quietly', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dx-newdb-'));
    try {
      const env = { DATA_DIR: '', DATABASE_URL: '' };
      const first = await dxIn(root, env, 'apps', 'list');
      assert.match(first.stderr, new RegExp(`created a new database at ${join(root, 'data', 'dx.sqlite')}`));
      const second = await dxIn(root, env, 'apps', 'list');
      assert.equal(second.stderr, '');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('a stopped service is named with what to do, not a bare ECONNREFUSED', async () => {
    const root = mkdtempSync(join(tmpdir(), 'dx-noservice-'));
    try {
      writeFileSync(join(root, 'f.csv'), 'id\n1\n');
      // A port that was free a moment ago (fetch refuses to try the port 1 of earlier versions).
      const server = createServer();
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const port = (server.address() as AddressInfo).port;
      await new Promise((resolve) => server.close(resolve));
      await assert.rejects(
        dxIn(
          root,
          { DX_ACCESS_TOKEN: 'dxt_x' },
          'upload',
          'ds',
          'f.csv',
          '--url',
          `http://127.0.0.1:${port}`,
        ),
        (err: { code: number; stderr: string }) => {
          assert.equal(err.code, 1);
          assert.match(
            err.stderr,
            new RegExp(
              `^dx: cannot reach the service at http://127\\.0\\.0\\.1:${port}/: nothing listens there`,
            ),
          );
          assert.match(err.stderr, /npm start.*DX_API_URL/);
          return true;
        },
      );
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  test('an unreachable database is named with what to do', async () => {
    await assert.rejects(
      dxIn(process.cwd(), { DATABASE_URL: 'postgres://postgres:pw@127.0.0.1:1/test' }, 'apps', 'list'),
      (err: { code: number; stderr: string }) => {
        assert.equal(err.code, 1);
        assert.match(
          err.stderr,
          /^dx: cannot open the database postgres:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/test: nothing listens there \(127\.0\.0\.1:1\)\. .*DATABASE_URL/,
        );
        assert.doesNotMatch(err.stderr, /:pw@/);
        return true;
      },
    );
  });
});
