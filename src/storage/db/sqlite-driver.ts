// Picks the better-sqlite3 build that is safe on the running Node.js.
// - better-sqlite3 12 derives from node::ObjectWrap; built with Node >= 24.19 headers it aborts the
//   process when the garbage collector frees a statement outside a V8 context (nodejs/node#65446).
// - better-sqlite3 13 is a Node-API addon without that flaw, but does not run on Node 20.
// Both are installed (13 under the alias better-sqlite3-napi); the API is the same.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

const require = createRequire(import.meta.url);
const nodeMajor = Number(process.versions.node.split('.')[0]);

/** The better-sqlite3 Database constructor for this Node.js. */
export const SqliteDatabase = require(
  nodeMajor >= 22 ? 'better-sqlite3-napi' : 'better-sqlite3',
) as typeof BetterSqlite3;
