// The example of packages/client/README.md is type-checked against the built package and run
// against the service, as a partner would copy it.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { onDatabase } from '../support/databases.js';
import { startFixture, type Fixture } from '../support/fixture.js';
import { onboardApp } from '../support/onboarding.js';

const ROOT = process.cwd();

/** The first ```ts block of the README. */
function exampleOf(readme: string): string {
  const match = /```ts\n([\s\S]*?)```/.exec(readme);
  if (match?.[1] === undefined) throw new Error('packages/client/README.md has no ts block');
  return match[1];
}

/** Type errors of `file`, compiled as a partner's strict ESM project would compile it. */
function typeErrors(file: string): string[] {
  const program = ts.createProgram([file], {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    lib: ['lib.es2023.d.ts'],
    types: ['node'],
    strict: true,
    noUncheckedIndexedAccess: true,
    noEmit: true,
    skipLibCheck: true,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .map((d) => ts.flattenDiagnosticMessageText(d.messageText, '\n'))
    .filter((m) => m.length > 0);
}

await onDatabase('sqlite', 'client README example', (target) => {
  let h: Fixture;
  let dir: string;
  before(async () => {
    h = await startFixture(target);
    // Inside the repository, so that `@dataset-exchange/client` resolves as in a partner's project.
    dir = mkdtempSync(join(ROOT, 'dist', 'readme-example-'));
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    await h.close();
  });

  void it('compiles with strict settings and runs the partner flow', async () => {
    const code = exampleOf(readFileSync(join(ROOT, 'packages', 'client', 'README.md'), 'utf8'));
    const file = join(dir, 'example.mts');
    writeFileSync(file, code);
    assert.deepEqual(typeErrors(file), []);

    const js = ts.transpileModule(code, {
      compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext },
    }).outputText;
    writeFileSync(join(dir, 'example.mjs'), js);
    const partner = await onboardApp(h, 'README partner', 'RS256');
    writeFileSync(join(dir, 'my-app.pem'), partner.privateKeyPem, { mode: 0o600 });
    writeFileSync(
      join(dir, 'voters.csv'),
      'voter_id,first_name,opted_in\n1,Ann,true\n2,Bob,false\nx,Bad,true\n',
    );
    const { stdout, stderr } = await promisify(execFile)(process.execPath, ['example.mjs'], {
      cwd: dir,
      env: {
        ...process.env,
        DX_API_URL: h.baseUrl,
        DX_APP_ID: partner.app.id,
        DX_KEY_FILE: 'my-app.pem',
        DX_INSTALLATION_ID: String(partner.installationId),
        DX_WORKSPACE_KEY: partner.workspaceKey,
      },
    });
    assert.equal(stdout, '2 records loaded, 1 left out\n1 Ann\n2 Bob\n');
    assert.match(stderr, /^uploaded \d+ of \d+ bytes$/m);
    assert.match(stderr, /^404 dataset_not_found Dataset no-such-dataset not found\./m);
    assert.equal(
      readFileSync(join(dir, 'voters-export.csv'), 'utf8'),
      'voter_id,first_name,opted_in\r\n1,Ann,true\r\n2,Bob,false\r\n',
    );
  });
});
