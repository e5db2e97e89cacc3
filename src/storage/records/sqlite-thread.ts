// Work on an SQLite file on a thread of its own, with a connection of its own: a statement of
// seconds for millions of records (better-sqlite3 runs on the calling thread) would otherwise hold
// the event loop of a process that also serves the API. The key build (sqlite-key.ts) and the
// change log's whole-table scans (sqlite-statements.ts) run through here.
import { parentPort, workerData } from 'node:worker_threads';
import { startThread } from '../../lib/threads.js';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqliteConnection, type ConnectionUse } from '../db/database.js';

/** What a thread answers: its work's value, or the error it met (message and SQLite's code). */
type ThreadReply<T> = { value: T } | { error: { message: string; code: string | undefined } };

/** Runs the thread entry `script` on `file` with `input`; resolves with what its work returned. */
export function runOnSqliteThread<T>(script: URL, file: string, input: unknown, name: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = startThread(script, { file, input });
    let answered = false;
    worker.once('message', (reply: ThreadReply<T>) => {
      answered = true;
      if ('value' in reply) resolve(reply.value);
      else reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    });
    worker.once('error', (err) => {
      answered = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!answered) reject(new Error(`the SQLite ${name} thread exited (code ${code}) without an answer`));
    });
  });
}

/** In a thread entry: runs `work` on a connection (for `use`) to the file it was given, answers, and ends. */
export function answerOnSqliteThread<I, T>(
  use: ConnectionUse,
  work: (conn: BetterSqlite3.Database, input: I) => T,
): void {
  const { file, input } = workerData as { file: string; input: I };
  let reply: ThreadReply<T>;
  const conn = openSqliteConnection(file, use);
  try {
    reply = { value: work(conn, input) };
  } catch (err) {
    const e = err as { message?: unknown; code?: unknown };
    reply = {
      error: { message: String(e.message ?? err), code: typeof e.code === 'string' ? e.code : undefined },
    };
  } finally {
    conn.close();
  }
  parentPort?.postMessage(reply);
}
