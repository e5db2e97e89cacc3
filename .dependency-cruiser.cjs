// The dependency rule of docs/architecture.md, checked by `npm run lint`:
//   cli → runtime → {http, worker, proxy} → domain → storage → foundation (lib, net, config, errors)
// Every arrow points down; nothing points up or sideways between the three roles; no cycles.
// The client package (packages/client, @dataset-exchange/client) stands alone: it talks HTTP to
// the service and imports none of its code; of the service, only the CLI uses it (`dx upload`).
const LAYERS_ABOVE = {
  foundation: 'storage|domain|http|worker|proxy|runtime|cli',
  storage: 'domain|http|worker|proxy|runtime|cli',
  domain: 'http|worker|proxy|runtime|cli',
  http: 'worker|proxy|runtime|cli',
  worker: 'http|proxy|runtime|cli',
  proxy: 'http|worker|runtime|cli',
  runtime: 'cli',
};
const PATHS = {
  foundation: '^src/(lib|net|config|errors)',
  storage: '^src/storage/',
  domain: '^src/domain/',
  http: '^src/http/',
  worker: '^src/worker/',
  proxy: '^src/proxy/',
  runtime: '^src/runtime/',
};

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Import cycles make modules impossible to read or test alone.',
      from: { path: '^(src|packages)/' },
      to: { circular: true },
    },
    {
      name: 'client-stands-alone',
      severity: 'error',
      comment: 'The client package is published on its own: it may not import the service (src/).',
      from: { path: '^packages/client/' },
      to: { path: '^src/' },
    },
    {
      name: 'only-cli-uses-client',
      severity: 'error',
      comment: 'Of the service, only the CLI is a client of the API (docs/architecture.md).',
      from: { path: '^src/', pathNot: '^src/cli/' },
      to: { path: '(^packages/client/|@dataset-exchange/client)' },
    },
    ...Object.entries(LAYERS_ABOVE).map(([layer, above]) => ({
      name: `${layer}-points-down`,
      severity: 'error',
      comment: `${layer} may not import from ${above.split('|').join(', ')} (docs/architecture.md).`,
      from: { path: PATHS[layer] },
      to: { path: `^src/(${above})(/|\\.ts$)` },
    })),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '\\.test\\.ts$' },
    tsConfig: { fileName: 'tsconfig.json' },
    tsPreCompilationDeps: true,
  },
};
