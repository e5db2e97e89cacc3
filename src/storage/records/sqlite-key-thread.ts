// The entry of a thread that builds one SQLite staging table's key (sqlite-key.ts) and answers
// with the outcome.
import { finishKey, type KeyWork } from './sqlite-key.js';
import { answerOnSqliteThread } from './sqlite-thread.js';

answerOnSqliteThread('pass', (conn, work: KeyWork) => finishKey(conn, work));
