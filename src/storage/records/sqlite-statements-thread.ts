// The entry of a thread that runs SQL statements on an SQLite file in one transaction, on a
// connection of its own (sqlite-statements.ts says why), answers with each statement's count of
// changed rows or the error, and ends.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteConnection } from '../db/database.js';
import type { StatementsReply } from './sqlite-statements.js';

const { file, statements } = workerData as { file: string; statements: string[] };
let reply: StatementsReply;
const conn = openSqliteConnection(file);
try {
  reply = { changes: conn.transaction(() => statements.map((s) => conn.prepare(s).run().changes))() };
} catch (err) {
  const e = err as { message?: unknown; code?: unknown };
  reply = {
    error: { message: String(e.message ?? err), code: typeof e.code === 'string' ? e.code : undefined },
  };
} finally {
  conn.close();
}
parentPort?.postMessage(reply);
