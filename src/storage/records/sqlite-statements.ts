// Statements that scan whole record tables (a replace's diff against the records it follows, a
// delete's lost keys) run on a thread of their own with a connection of their own: each is one
// synchronous statement of seconds for millions of records (better-sqlite3 runs on the calling
// thread), which on the job's thread would hold the event loop of a process that also serves the
// API. As the key build does (sqlite-key.ts).
import { Worker } from 'node:worker_threads';

/** What the thread answers: each statement's changed rows, or the error it met. */
export type StatementsReply =
  { changes: number[] } | { error: { message: string; code: string | undefined } };

/** Runs `statements` in one transaction on a thread with a connection of its own to `file`. */
export function runStatementsOnThread(file: string, statements: string[]): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./sqlite-statements-thread.js', import.meta.url), {
      workerData: { file, statements },
    });
    let answered = false;
    worker.once('message', (reply: StatementsReply) => {
      answered = true;
      if ('changes' in reply) resolve(reply.changes);
      else reject(Object.assign(new Error(reply.error.message), { code: reply.error.code }));
    });
    worker.once('error', (err) => {
      answered = true;
      reject(err);
    });
    worker.once('exit', (code) => {
      if (!answered)
        reject(new Error(`the SQLite statements thread exited (code ${code}) without an answer`));
    });
  });
}
