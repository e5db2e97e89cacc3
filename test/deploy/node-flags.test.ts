// The service runs with the same Node.js flags wherever it is started as documented: `npm start`,
// the image's ENTRYPOINT (and so compose and the Kubernetes manifests), and the benchmark suite,
// which measures the process operators run. A flag changed in one place must change in all.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SERVICE_NODE_FLAGS } from '../../bench/lib/dx.js';

const root = process.cwd();

test('npm start, the image and the benchmark suite start the service with the same Node.js flags', () => {
  const start = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: { start: string } }
  ).scripts.start;
  const startFlags = /exec node (.*?) ?bin\/dx\.js serve$/.exec(start)?.[1]?.split(' ') ?? [];
  assert.deepEqual(startFlags, SERVICE_NODE_FLAGS, start);

  const dockerfile = readFileSync(join(root, 'deploy', 'Dockerfile'), 'utf8');
  const entrypoint = /^ENTRYPOINT (\[.*\])$/m.exec(dockerfile)?.[1];
  assert.ok(entrypoint !== undefined, 'the Dockerfile has an exec-form ENTRYPOINT');
  assert.deepEqual(JSON.parse(entrypoint), ['node', ...SERVICE_NODE_FLAGS, '/app/bin/dx.js']);
});
