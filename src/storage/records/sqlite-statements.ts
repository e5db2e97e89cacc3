// Statements that scan whole record tables (a replace's diff against the records it follows, a
// delete's lost keys) run on a thread of their own with a connection of their own: each is one
// synchronous statement of seconds for millions of records (better-sqlite3 runs on the calling
// thread), which on the job's thread would hold the event loop of a process that also serves the
// API. As the key build does (sqlite-key.ts; both through sqlite-thread.ts).
import { runOnSqliteThread } from './sqlite-thread.js';

/** Runs `statements` in one transaction on a thread with a connection of its own to `file`;
 * resolves with each statement's count of changed rows. */
export function runStatementsOnThread(file: string, statements: string[]): Promise<number[]> {
  return runOnSqliteThread(
    new URL('./sqlite-statements-thread.js', import.meta.url),
    file,
    statements,
    'statements',
  );
}
