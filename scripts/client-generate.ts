// Regenerates the client package's view of the API: packages/client/openapi.json (the document as
// GET /api/v1/openapi.json answers it, made from the app without a server) and, from it,
// packages/client/src/generated/openapi.ts (openapi-typescript). `npm run client:generate`;
// test/client/generated.test.ts fails while the committed files differ from what this writes.
import { execFile } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { promisify } from 'node:util';
import { openApiDocumentOfApp } from '../src/runtime/openapi-document.js';

/** The package folder (scripts/ is one level below the root, dist/scripts two). */
export const CLIENT_DIR = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', 'packages', 'client');

/** Where the two generated files live inside a client folder. */
export const GENERATED = { document: 'openapi.json', types: join('src', 'generated', 'openapi.ts') };

/**
 * Writes the document and its types under `dir`. Named component schemas become exported types
 * of their own (`--root-types`), so they follow the document's names once it has them.
 */
export async function generateClientFiles(dir: string): Promise<void> {
  const documentFile = join(dir, GENERATED.document);
  const typesFile = join(dir, GENERATED.types);
  writeFileSync(documentFile, `${JSON.stringify(await openApiDocumentOfApp(), null, 2)}\n`);
  mkdirSync(dirname(typesFile), { recursive: true });
  // Its bin by path: the package's exports map `*.js` to `*.mjs`, which the bin is not.
  const pkg = createRequire(import.meta.url).resolve('openapi-typescript/package.json');
  const cli = join(dirname(pkg), 'bin', 'cli.js');
  await promisify(execFile)(process.execPath, [
    cli,
    documentFile,
    '--root-types',
    '--root-types-no-schema-prefix',
    '--output',
    typesFile,
  ]);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await generateClientFiles(process.argv[2] ?? CLIENT_DIR);
  process.stdout.write(
    `wrote ${GENERATED.document} and ${GENERATED.types} under ${process.argv[2] ?? CLIENT_DIR}\n`,
  );
}
