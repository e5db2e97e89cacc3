import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { LocalObjectStore } from './local.js';
import { ObjectNotFound, ObjectTooLarge } from './object-store.js';

describe('LocalObjectStore', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dx-objects-'));
  const store = new LocalObjectStore(dir);
  after(() => rmSync(dir, { recursive: true, force: true }));
  const opts = { contentType: 'text/csv', maxBytes: 100 };

  it('puts, heads, gets, lists and deletes', async () => {
    const info = await store.put('datasets/d1/uploads/j1', Readable.from(['a,b\n', '1,2\n']), opts);
    assert.equal(info.size, 8);
    assert.equal((await store.head('datasets/d1/uploads/j1'))?.size, 8);
    assert.equal(await text(await store.get('datasets/d1/uploads/j1')), 'a,b\n1,2\n');
    // Readable by the service's user only, whatever the process umask.
    assert.equal(statSync(join(dir, 'datasets/d1/uploads/j1')).mode & 0o777, 0o600);
    assert.equal(statSync(join(dir, 'datasets/d1/uploads')).mode & 0o777, 0o700);
    await store.put('datasets/d1/exports/1.csv', Readable.from(['x']), opts);
    assert.deepEqual(
      (await store.list('datasets/d1/')).map((o) => o.key),
      ['datasets/d1/exports/1.csv', 'datasets/d1/uploads/j1'],
    );
    await store.delete('datasets/d1/uploads/j1');
    assert.equal(await store.head('datasets/d1/uploads/j1'), null);
    await assert.rejects(store.get('datasets/d1/uploads/j1'), ObjectNotFound);
    await store.deletePrefix('datasets/d1/');
    assert.deepEqual(await store.list('datasets/d1/'), []);
  });

  it('leaves nothing behind when the stream is too large or fails', async () => {
    await assert.rejects(
      store.put('datasets/d2/uploads/big', Readable.from(['x'.repeat(60), 'y'.repeat(60)]), opts),
      ObjectTooLarge,
    );
    const failing = new Readable({
      read() {
        this.destroy(new Error('client went away'));
      },
    });
    await assert.rejects(store.put('datasets/d2/uploads/cut', failing, opts), /client went away/);
    assert.equal(await store.head('datasets/d2/uploads/big'), null);
    assert.deepEqual(readdirSync(join(dir, '.tmp')), []);
  });
});
