// The benchmark suite's entry (node dist/bench/run.js [part…] [--seconds N] [--runs N] [--out F]).
// The suite drives better-sqlite3 13, which crashes Node.js older than 22.14; as bin/dx.js and
// scripts/test.mjs do, an older `node` hands the same command over to the bundled Node.js 24
// before anything loads the driver, and the suite itself (suite.ts) is imported only afterwards.

interface NodeRuntime {
  runsOnSupportedNode(name: string): boolean;
}

// From dist/bench/run.js, the repository's bin/ (plain JavaScript, outside the compiled tree).
const runtime = (await import(new URL('../../bin/node-runtime.js', import.meta.url).href)) as NodeRuntime;
if (runtime.runsOnSupportedNode('bench')) await import('./suite.js');
