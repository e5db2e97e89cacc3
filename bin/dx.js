#!/usr/bin/env node
// The one CLI: `dx serve`, `dx migrate`, onboarding commands. Runs the compiled code in dist/.
import { runsOnSupportedNode } from './node-runtime.js';

if (runsOnSupportedNode('dx')) {
  import('../dist/src/cli/main.js').catch((err) => {
    if (err && err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes('dist/src/cli')) {
      console.error('dx: the project is not built yet; run `npm install` (or `npm run build`) first.');
      process.exit(1);
    }
    throw err;
  });
}
