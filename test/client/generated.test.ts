// The client package's generated files are current: the committed OpenAPI document is the one the
// app serves, and the committed types are what openapi-typescript makes of it. A change of a route
// schema without `npm run client:generate` fails here.
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CLIENT_DIR, GENERATED, generateClientFiles } from '../../scripts/client-generate.js';

void it('packages/client/openapi.json and src/generated/openapi.ts are current (npm run client:generate)', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-client-generate-'));
  try {
    mkdirSync(join(dir, 'src'));
    await generateClientFiles(dir);
    for (const file of [GENERATED.document, GENERATED.types]) {
      const fresh = readFileSync(join(dir, file), 'utf8');
      const committed = readFileSync(join(CLIENT_DIR, file), 'utf8');
      assert.ok(
        fresh === committed,
        `packages/client/${file} is out of date: run \`npm run client:generate\``,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

void it('the generated types name every path of the document', () => {
  const doc = JSON.parse(readFileSync(join(CLIENT_DIR, GENERATED.document), 'utf8')) as {
    paths: Record<string, unknown>;
  };
  const types = readFileSync(join(CLIENT_DIR, GENERATED.types), 'utf8');
  for (const path of Object.keys(doc.paths)) assert.ok(types.includes(`"${path}": {`), path);
});
