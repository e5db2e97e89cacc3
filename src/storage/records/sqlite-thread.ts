// Work on an SQLite file on a thread of its own, with a connection of its own: a statement of
// seconds for millions of records (better-sqlite3 runs on the calling thread) would otherwise hold
// the event loop of a process that also serves the API. The key build (sqlite-key.ts) and the
// change log's whole-table scans (sqlite-statements.ts) run through here.
import { parentPort, workerData } from 'node:worker_threads';
import { startThread } from '../../lib/threads.js';
import type BetterSqlite3 from 'better-sqlite3';
import { openSqliteConnection, type ConnectionUse } from '../db/database.js';

/** An error as a thread posts it: its message and SQLite's code (an Error itself would lose the code). */
export interface ThreadError {
  message: string;
  code: string | undefined;
}

/** What a thread posts of an error it met. */
export function threadError(err: unknown): ThreadError {
  const e = err as { message?: unknown; code?: unknown };
  return { message: String(e.message ?? err), code: typeof e.code === 'string' ? e.code : undefined };
}

/** The error a thread posted, as an Error with SQLite's code again. */
export function errorFromThread(error: ThreadError): Error {
  return Object.assign(new Error(error.message), { code: error.code });
}

/** What a thread answers: its work's value, or the error it met. */
type ThreadReply<T> = { value: T } | { error: ThreadError };

/** Runs the thread entry `script` on `file` with `input`; resolves with what its work returned. */
export function runOnSqliteThread<T>(script: URL, file: string, input: unknown, name: string): Promise<T> {
  return new Promise((resolve, reject) => {
    const worker = startThread(script, { file, input });
    let answered = false;
    worker.once('message', (reply: ThreadReply<T>) => {
      answered = true;
      if ('value' in reply) resolve(reply.value);
      else reject(errorFromThread(reply.error));
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
    reply = { error: threadError(err) };
  } finally {
    conn.close();
  }
  parentPort?.postMessage(reply);
}
