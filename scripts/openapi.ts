// Writes the service's OpenAPI document (as GET /api/v1/openapi.json answers it) without starting
// a server: `node dist/scripts/openapi.js [file]` (stdout without a file).
import { writeFileSync } from 'node:fs';
import { openApiDocumentOfApp } from '../src/runtime/openapi-document.js';

const text = `${JSON.stringify(await openApiDocumentOfApp(), null, 2)}\n`;
const file = process.argv[2];
if (file === undefined) process.stdout.write(text);
else writeFileSync(file, text);
