import { test } from 'node:test';
import assert from 'node:assert/strict';
import BetterSqlite3 from 'better-sqlite3';
import { withStatementCache } from './statement-cache.js';

test('statements are reused by SQL text and evicted least recently used first', () => {
  const conn = new BetterSqlite3(':memory:');
  let prepared = 0;
  const prepare = conn.prepare.bind(conn);
  conn.prepare = (sql: string) => {
    prepared += 1;
    return prepare(sql);
  };
  const db = withStatementCache(conn, 2);
  const a = db.prepare('select 1 as a');
  assert.equal(db.prepare('select 1 as a'), a);
  db.prepare('select 2 as b');
  db.prepare('select 1 as a'); // a is now the most recent
  db.prepare('select 3 as c'); // evicts b
  assert.equal(prepared, 3);
  db.prepare('select 2 as b');
  assert.equal(prepared, 4);
  assert.deepEqual(db.prepare('select 1 as a').all([]), [{ a: 1 }]);
  db.close();
  assert.equal(conn.open, false);
});

test('a cached statement still works after the schema changes', () => {
  const db = withStatementCache(new BetterSqlite3(':memory:'));
  db.prepare('create table t (x integer)').run([]);
  db.prepare('insert into t (x) values (?)').run([1]);
  db.prepare('alter table t add column y text').run([]);
  db.prepare('insert into t (x) values (?)').run([2]);
  assert.deepEqual(db.prepare('select x from t order by x').all([]), [{ x: 1 }, { x: 2 }]);
  db.close();
});
