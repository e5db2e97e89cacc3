// The OpenAPI document of /api/v1 without a listening server: the app is built on a throwaway
// SQLite database in a temporary folder and asked for its document, as GET /api/v1/openapi.json
// would answer it. The client package's types are generated from it (scripts/openapi.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../config.js';
import { buildApp } from '../http/app.js';
import { openDatabase } from '../storage/db/database.js';
import { createServices } from './services.js';

/** The document the API serves, its server URL set to `publicUrl`. */
export async function openApiDocumentOfApp(publicUrl = 'http://localhost:8080'): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), 'dx-openapi-'));
  try {
    const config = loadConfig({ DATA_DIR: dir, PUBLIC_URL: publicUrl, LOG_LEVEL: 'silent' });
    const database = await openDatabase(config.databaseUrl);
    try {
      const app = await buildApp(config, await createServices(config, database), { logger: false });
      try {
        await app.ready();
        return app.swagger();
      } finally {
        await app.close();
      }
    } finally {
      await database.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
