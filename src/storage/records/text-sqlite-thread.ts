// The entry of a thread that renders one SQLite records table as text, read whole and sorted
// (text-sqlite.ts), and posts it piece by piece, each when the reader has asked for one.
import { parentPort, workerData } from 'node:worker_threads';
import { openSqliteConnection } from '../db/database.js';
import { threadError } from './sqlite-thread.js';
import { CREDITS, renderedPieces, STOP, type TextMessage, type TextWork } from './text-sqlite.js';

const { work, control } = workerData as { work: TextWork; control: Int32Array };
const encoder = new TextEncoder();
const post = (message: TextMessage, transfer: ArrayBuffer[] = []) =>
  parentPort?.postMessage(message, transfer);

/** Waits until the reader asks for a piece (true) or is gone (false). */
function readerWants(): boolean {
  for (;;) {
    if (Atomics.load(control, STOP) !== 0) return false;
    const credits = Atomics.load(control, CREDITS);
    if (credits > 0) {
      Atomics.sub(control, CREDITS, 1);
      return true;
    }
    Atomics.wait(control, CREDITS, credits, 1000);
  }
}

const conn = openSqliteConnection(work.file, 'pass');
try {
  conn.exec('begin');
  let wanted = true;
  for (const piece of renderedPieces(conn, work, 'sort')) {
    if (!(wanted = readerWants())) break;
    // A fresh buffer of its own, which the transfer moves instead of copying.
    const bytes = encoder.encode(piece);
    post({ piece: bytes }, [bytes.buffer]);
  }
  conn.exec('commit');
  if (wanted) post({ end: true });
} catch (err) {
  post({ error: threadError(err) });
} finally {
  conn.close();
}
