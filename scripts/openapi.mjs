#!/usr/bin/env node
// Writes the service's OpenAPI 3.1 document to a file (or stdout), built from the app itself
// without a running server: the routes of every role, the S3 notification webhook included; with
// --served, the document as a default deployment serves it (STORAGE=local: no webhook).
// Usage (after `npm run build`): node scripts/openapi.mjs [--served] [out.json]
// PUBLIC_URL, when set, is the document's server URL.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runsOnSupportedNode } from '../bin/node-runtime.js';

async function main() {
  const [{ loadConfig }, { openDatabase }, { createServices }, { buildApp }] = await Promise.all([
    import('../dist/src/config.js'),
    import('../dist/src/storage/db/database.js'),
    import('../dist/src/runtime/services.js'),
    import('../dist/src/http/app.js'),
  ]);
  const dir = mkdtempSync(join(tmpdir(), 'dx-openapi-'));
  try {
    const served = process.argv.includes('--served');
    const config = loadConfig({
      DATA_DIR: dir,
      ...(process.env.PUBLIC_URL ? { PUBLIC_URL: process.env.PUBLIC_URL } : {}),
      // Only so that the webhook is registered and documented; nothing is contacted.
      ...(served
        ? {}
        : {
            STORAGE: 's3',
            S3_BUCKET: 'dx-openapi',
            S3_TRANSFERS: 'direct',
            S3_NOTIFICATION_TOKEN: 'document-only-'.padEnd(32, '0'),
          }),
    });
    const database = await openDatabase(config.databaseUrl);
    const app = await buildApp(config, await createServices(config, database), { logger: false });
    try {
      await app.ready();
      const text = `${JSON.stringify(app.swagger(), null, 2)}\n`;
      const out = process.argv.slice(2).find((arg) => !arg.startsWith('--'));
      if (out === undefined) process.stdout.write(text);
      else writeFileSync(out, text);
    } finally {
      await app.close();
      await database.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (runsOnSupportedNode('scripts/openapi.mjs')) await main();
