import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isWellFormedAuthorization } from './auth-check.js';

const basic = (s: string) => `Basic ${Buffer.from(s).toString('base64')}`;

void describe('isWellFormedAuthorization', () => {
  void it('accepts Basic <name>:<key>|<integer mode>, scheme in any case', () => {
    for (const v of [basic('app:key|1'), basic('app:key|0'), basic('a b:k:e|y|42'), basic('app:key|-3')]) {
      assert.equal(isWellFormedAuthorization(v), true, v);
    }
    assert.equal(isWellFormedAuthorization(`BASIC ${Buffer.from('a:b|1').toString('base64')}`), true);
  });

  void it('refuses everything else', () => {
    const bad = [
      undefined,
      '',
      'Basic',
      'Basic ',
      'Bearer eyJ',
      'Basic ****',
      'Basic YWJjZA', // unpadded
      basic('nocolon|1'),
      basic(':key|1'),
      basic('app:|1'),
      basic('app:key'),
      basic('app:key|'),
      basic('app:key|1x'),
      basic('app:key| 1'),
      basic('app:key|1.0'),
    ];
    for (const v of bad) assert.equal(isWellFormedAuthorization(v), false, String(v));
  });
});
