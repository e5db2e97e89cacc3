// The entry of a thread that runs SQL statements on an SQLite file in one transaction (why:
// sqlite-statements.ts) and answers with each statement's count of changed rows.
import { answerOnSqliteThread } from './sqlite-thread.js';

answerOnSqliteThread('service', (conn, statements: string[]) =>
  conn.transaction(() => statements.map((s) => conn.prepare(s).run().changes))(),
);
