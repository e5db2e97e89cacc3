// Console path and query numbers: malformed ones are a 404 or a 400, never a 500; closed sets hold.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProblemError } from '../../../errors.js';
import { choiceQuery, idParam, optionalIdQuery } from './params.js';

const status = (f: () => unknown) => {
  try {
    f();
  } catch (err) {
    if (err instanceof ProblemError) return err.status;
    throw err;
  }
  return null;
};

test('idParam takes positive ids and answers 404 for anything else', () => {
  assert.equal(idParam({ id: '42' }, 'id', 'gone'), 42);
  for (const raw of ['0', '-1', 'abc', '1.5', '', '9999999999999999', undefined])
    assert.equal(
      status(() => idParam({ id: raw }, 'id', 'gone')),
      404,
      String(raw),
    );
});

test('optionalIdQuery: absent is undefined, malformed is 400', () => {
  assert.equal(optionalIdQuery({}, 'before'), undefined);
  assert.equal(optionalIdQuery({ before: '' }, 'before'), undefined);
  assert.equal(optionalIdQuery({ before: '17' }, 'before'), 17);
  for (const raw of ['0', '5x', ['1', '2'], '1e3'])
    assert.equal(
      status(() => optionalIdQuery({ before: raw }, 'before')),
      400,
      String(raw),
    );
});

test('choiceQuery accepts only the choices themselves, not inherited names', () => {
  const choices = { connected: 1, disconnected: 2 };
  assert.equal(choiceQuery({ done: 'connected' }, 'done', choices), 'connected');
  for (const raw of ['toString', '__proto__', 'other', undefined, ['connected']])
    assert.equal(choiceQuery({ done: raw }, 'done', choices), null, String(raw));
});
