import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { safeObjectPath, UnsafePath } from './safe-path.js';

const root = resolve('/srv/dx/objects');

describe('safeObjectPath', () => {
  it('maps keys below the root', () => {
    assert.equal(
      safeObjectPath(root, 'datasets/abc/uploads/1'),
      join(root, 'datasets', 'abc', 'uploads', '1'),
    );
    assert.equal(
      safeObjectPath(root, 'datasets/abc/exports/3.csv'),
      join(root, 'datasets/abc/exports/3.csv'),
    );
    assert.equal(safeObjectPath(root, 'datasets/abc/'), join(root, 'datasets', 'abc'));
  });

  it('refuses every way out of the root', () => {
    for (const key of [
      '',
      '/etc/passwd',
      '../x',
      'a/../../x',
      'a/..',
      'a/./b',
      'a//b',
      '.tmp/x',
      'a\\..\\b',
      'a/b\0c',
      'C:/x',
      '..',
      '.',
      'a/.hidden',
      'x'.repeat(2000),
    ]) {
      assert.throws(() => safeObjectPath(root, key), UnsafePath, JSON.stringify(key));
    }
  });
});
