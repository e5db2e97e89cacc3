import assert from 'node:assert/strict';
import { test } from 'node:test';
import SerializerSelector from '@fastify/fast-json-stringify-compiler';
import { sharedSerializers } from './serializers.js';

const PROBLEM = {
  type: 'object',
  properties: { title: { type: 'string' }, status: { type: 'integer' } },
};
const route = (schema: unknown, httpStatus: string, url = '/a') => ({
  method: 'GET',
  url,
  httpStatus,
  schema,
});

/** Fastify's own factory, counting what it compiles. */
function countingFactory() {
  const compiled: unknown[] = [];
  const base = SerializerSelector();
  const build: SerializerSelector.SerializerFactory = (external, options) => {
    const compile = base(external, options);
    return (r) => {
      compiled.push(r.schema);
      return compile(r);
    };
  };
  return { build, compiled };
}

test('equal schemas of different routes and statuses share one compiled serializer', () => {
  const { build, compiled } = countingFactory();
  const compile = sharedSerializers(build)({}, {});
  const first = compile(route(PROBLEM, '404'));
  const again = compile(route(structuredClone(PROBLEM), '409', '/b'));
  assert.equal(again, first);
  assert.equal(compiled.length, 1);
  // It serializes by its schema: properties outside it are left out.
  assert.equal(first({ title: 'Not found', status: 404, secret: 'x' }), '{"title":"Not found","status":404}');
});

test('different schemas get serializers of their own', () => {
  const { build, compiled } = countingFactory();
  const compile = sharedSerializers(build)({}, {});
  const problem = compile(route(PROBLEM, '404'));
  const other = compile(route({ type: 'object', properties: { id: { type: 'string' } } }, '200'));
  assert.notEqual(other, problem);
  assert.equal(compiled.length, 2);
  assert.equal(other({ id: 'd1', title: 'x' }), '{"id":"d1"}');
});

test('each factory call (a scope with its own named schemas) compiles anew', () => {
  const { build, compiled } = countingFactory();
  const shared = sharedSerializers(build);
  const a = shared({}, {})(route(PROBLEM, '404'));
  const b = shared({}, {})(route(PROBLEM, '404'));
  assert.notEqual(a, b);
  assert.equal(compiled.length, 2);
});
