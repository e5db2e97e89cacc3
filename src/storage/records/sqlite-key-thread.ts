// The entry of a thread that builds one SQLite staging table's key (sqlite-key.ts) on a connection
// of its own, answers with the outcome or the error, and ends.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteConnection } from '../db/database.js';
import { finishKey, type KeyThreadReply, type KeyWork } from './sqlite-key.js';

const { file, work } = workerData as { file: string; work: KeyWork };
let reply: KeyThreadReply;
const conn = openSqliteConnection(file);
try {
  reply = { outcome: finishKey(conn, work) };
} catch (err) {
  const e = err as { message?: unknown; code?: unknown };
  reply = {
    error: { message: String(e.message ?? err), code: typeof e.code === 'string' ? e.code : undefined },
  };
} finally {
  conn.close();
}
parentPort?.postMessage(reply);
