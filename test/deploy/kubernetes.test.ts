// deploy/kubernetes as `kubectl apply -k` renders it: valid against the schemas of Kubernetes 1.36
// (unknown fields included), and holding what the schemas cannot see: probes on the admin port,
// a grace period above the configured drain, budgets and autoscalers aimed at real Deployments,
// only settings the service knows, one image everywhere, and nothing running on the examples.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import {
  KUBERNETES_DIR,
  parseEnvFile,
  podSpecOf,
  renderKustomization,
  type KubeObject,
} from '../support/kustomize.js';
import {
  environmentOf,
  idOf,
  imageProblems,
  layoutProblems,
  schemaProblems,
  unknownFieldProblems,
} from './kubernetes-checks.js';

const SECRET_ENV = join(KUBERNETES_DIR, 'config', 'secret.env');
const UPSTREAM_ENV = join(KUBERNETES_DIR, 'proxy', 'upstream.env');
const example = readFileSync(`${SECRET_ENV}.example`, 'utf8');

/** secret.env as an operator writes it from the example: every value filled in. */
const FILLED: Record<string, string> = {
  SIGNING_SECRET: randomBytes(36).toString('base64'),
  DATABASE_URL: `postgres://dx:${randomBytes(24).toString('hex')}@postgres.databases.svc:5432/dx`,
  AWS_ACCESS_KEY_ID: 'AKIAEXAMPLEEXAMPLE01',
  AWS_SECRET_ACCESS_KEY: randomBytes(30).toString('base64'),
};
const filledSecret = parseEnvFile(example, 'secret.env.example')
  .map(([key]) => {
    assert.ok(FILLED[key] !== undefined, `the test fills in ${key}`);
    return `${key}=${FILLED[key]}`;
  })
  .join('\n');
const OPERATOR_FILES = new Map([
  [SECRET_ENV, filledSecret],
  [UPSTREAM_ENV, 'UPSTREAM_URL=https://upstream.example.org\n'],
]);

const render = (dir: string, files: ReadonlyMap<string, string> = OPERATOR_FILES) =>
  renderKustomization(join(KUBERNETES_DIR, dir), { files });
const renders = {
  migrate: render('migrate'),
  app: render('app'),
  'app-with-proxy': render('app-with-proxy'),
};
const everything = Object.values(renders).flat();

const ids = (objects: readonly KubeObject[], kind: string) =>
  objects
    .filter((o) => o.kind === kind)
    .map((o) => o.metadata.name)
    .sort();

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- mutations reach into any field
type Any = Record<string, any>;

/** A deep copy of `objects` with `change` applied to the object `id` (`Kind/name`, hash suffix aside). */
function changed(objects: readonly KubeObject[], id: string, change: (o: Any) => void) {
  const copy = structuredClone(objects) as KubeObject[];
  const target = copy.find(
    (o) =>
      idOf(o) === id || (o.kind === id.split('/')[0] && o.metadata.name.startsWith(`${id.split('/')[1]}-`)),
  );
  assert.ok(target !== undefined, `${id} is rendered`);
  change(target);
  return copy;
}
const container = (o: Any, index = 0) => o.spec.template.spec.containers[index] as Any;

/** The settings each container runs with, as loadConfig would read them in the pod. */
function podConfigs(objects: readonly KubeObject[]) {
  return objects.flatMap((workload) => {
    const spec = podSpecOf(workload) as { containers: Any[]; initContainers?: Any[] } | null;
    if (spec === null) return [];
    return [...(spec.initContainers ?? []), ...spec.containers].map((c) => {
      const problems: string[] = [];
      const env = Object.fromEntries(environmentOf(c as never, objects, problems, idOf(workload)));
      assert.deepEqual(problems, []);
      const args = c.args as string[];
      const role = args[0] === 'serve' && args[1] === '--role' ? { ROLES: args[2] } : {};
      return { where: `${idOf(workload)} ${c.name as string}`, env: { ...env, ...role } };
    });
  });
}

void test('the migration Job renders apart from the roles, the proxy only where included', () => {
  assert.deepEqual(ids(renders.migrate, 'Job'), ['dx-migrate']);
  assert.deepEqual(ids(renders.migrate, 'Deployment'), []);
  assert.deepEqual(ids(renders.app, 'Deployment'), ['dx-api', 'dx-worker']);
  assert.deepEqual(ids(renders.app, 'Job'), []);
  assert.deepEqual(ids(renders['app-with-proxy'], 'Deployment'), ['dx-api', 'dx-proxy', 'dx-worker']);
  assert.deepEqual(ids(renders['app-with-proxy'], 'HorizontalPodAutoscaler'), ['dx-api', 'dx-proxy']);
  assert.deepEqual(ids(renders['app-with-proxy'], 'PodDisruptionBudget'), [
    'dx-api',
    'dx-proxy',
    'dx-worker',
  ]);
  assert.deepEqual(ids(renders['app-with-proxy'], 'Service'), ['dx-api', 'dx-proxy']);
  // The same settings and secrets in every render: one ConfigMap and one Secret, by hashed name.
  for (const kind of ['ConfigMap', 'Secret']) {
    const names = new Set(
      Object.values(renders).flatMap((objects) => ids(objects, kind).filter((n) => n.startsWith('dx-s'))),
    );
    assert.equal(names.size, 1, `${kind}: ${[...names].join(', ')}`);
  }
});

void test('every object is valid against the schemas of Kubernetes 1.36, unknown fields included', () => {
  assert.deepEqual(schemaProblems(everything), []);
  assert.deepEqual(unknownFieldProblems(everything), []);
});

void test('the layout holds: probes, grace periods, budgets, autoscalers, services, settings, security, one image', () => {
  for (const [name, objects] of Object.entries(renders)) assert.deepEqual(layoutProblems(objects), [], name);
  assert.deepEqual(imageProblems(renders), []);
});

void test("every container's settings pass the service's own validation once secret.env is written", () => {
  const configs = podConfigs(everything);
  assert.ok(configs.length >= 8, 'the api, worker and proxy containers, their schema checks and the Job');
  for (const { where, env } of configs) {
    const config = loadConfig(env);
    assert.equal(config.storage.kind, 's3', where);
    assert.equal(config.databaseUrl, FILLED.DATABASE_URL, where);
    assert.equal(config.signingSecret, FILLED.SIGNING_SECRET, where);
    assert.equal(config.admin.port, 9464, where);
  }
});

void test('as published, nothing runs: secret.env is not in git, the example is empty, the proxy needs its upstream', () => {
  const ignored = readFileSync(join(process.cwd(), '.gitignore'), 'utf8').split('\n');
  assert.ok(ignored.includes('deploy/kubernetes/config/secret.env'));
  const values = parseEnvFile(example, 'secret.env.example');
  assert.deepEqual(
    values.map(([key]) => key),
    ['SIGNING_SECRET', 'DATABASE_URL', 'AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'],
  );
  assert.deepEqual(
    values.filter(([, value]) => value !== ''),
    [],
    'every example value is empty',
  );
  // The repository's upstream.env, as it is: the proxy role refuses to start on it.
  const published = render('app-with-proxy', new Map([[SECRET_ENV, filledSecret]]));
  const proxy = podConfigs(published).find((c) => c.where === 'Deployment/dx-proxy proxy');
  assert.ok(proxy !== undefined);
  assert.throws(() => loadConfig(proxy.env), /UPSTREAM_URL: required when the proxy role runs/);
});

void test('each check catches the mistake it is for', () => {
  const app = renders['app-with-proxy'];
  const cases: [string, KubeObject[], RegExp][] = [
    [
      'a liveness probe on the API port',
      changed(app, 'Deployment/dx-api', (o) => (container(o).livenessProbe.httpGet.port = 'http')),
      /dx-api container api: livenessProbe asks port http \(8080\), not ADMIN_PORT 9464/,
    ],
    [
      'ADMIN_PORT moved in the settings, the probes left behind',
      changed(app, 'ConfigMap/dx-settings', (o) => (o.data.ADMIN_PORT = '9090')),
      /dx-worker container worker: readinessProbe asks port admin \(9464\), not ADMIN_PORT 9090/,
    ],
    [
      'a grace period shorter than the drain',
      changed(app, 'ConfigMap/dx-settings', (o) => (o.data.SHUTDOWN_GRACE_MS = '30000')),
      /Deployment\/dx-worker: terminationGracePeriodSeconds 30 < 45/,
    ],
    [
      'SHUTDOWN_DELAY_MS left to its default',
      changed(app, 'ConfigMap/dx-settings', (o) => delete o.data.SHUTDOWN_DELAY_MS),
      /dx-api: SHUTDOWN_DELAY_MS and SHUTDOWN_GRACE_MS must both be set explicitly/,
    ],
    [
      'a budget whose selector matches nothing',
      changed(
        app,
        'PodDisruptionBudget/dx-proxy',
        (o) => (o.spec.selector.matchLabels['app.kubernetes.io/component'] = 'proxies'),
      ),
      /PodDisruptionBudget\/dx-proxy: selects 0 Deployments/,
    ],
    [
      'a budget that blocks node drains',
      changed(app, 'PodDisruptionBudget/dx-api', (o) => (o.spec.minAvailable = 2)),
      /minAvailable 2 with at least 2 replicas of Deployment\/dx-api blocks every node drain/,
    ],
    [
      'an autoscaler aimed at a misspelt Deployment',
      changed(app, 'HorizontalPodAutoscaler/dx-api', (o) => (o.spec.scaleTargetRef.name = 'dx-apii')),
      /HorizontalPodAutoscaler\/dx-api: scales apps\/v1 Deployment dx-apii, which the layout does not have/,
    ],
    [
      'replicas beside an autoscaler',
      changed(app, 'Deployment/dx-proxy', (o) => (o.spec.replicas = 2)),
      /Deployment\/dx-proxy: sets replicas although HorizontalPodAutoscaler\/dx-proxy owns the count/,
    ],
    [
      'CPU autoscaling without a CPU request',
      changed(app, 'Deployment/dx-api', (o) => delete container(o).resources.requests.cpu),
      /scales on cpu utilization, but Deployment\/dx-api container api requests no cpu/,
    ],
    [
      'a Secret referred to by a wrong name',
      changed(app, 'Deployment/dx-worker', (o) => (container(o).envFrom[1].secretRef.name = 'dx-secret')),
      /dx-worker container worker: reads Secret dx-secret, which the layout does not have/,
    ],
    [
      'a variable read from a key the ConfigMap lacks',
      changed(app, 'Deployment/dx-api', (o) => {
        const settings = container(o).envFrom[0].configMapRef.name as string;
        container(o).env = [
          { name: 'LOG_LEVEL', valueFrom: { configMapKeyRef: { name: settings, key: 'LOGLEVEL' } } },
        ];
      }),
      /LOG_LEVEL reads key LOGLEVEL of ConfigMap dx-settings-\w+, which has no such key/,
    ],
    [
      'a setting the service does not know',
      changed(app, 'ConfigMap/dx-settings', (o) => (o.data.S3_BUCKT = 'dx')),
      /dx-api container api: S3_BUCKT is not a setting of src\/config\.ts/,
    ],
    [
      'a secret in the ConfigMap',
      changed(app, 'ConfigMap/dx-settings', (o) => (o.data.SIGNING_SECRET = 'x')),
      /ConfigMap\/dx-settings-\w+: SIGNING_SECRET is a secret; it belongs in the Secret/,
    ],
    [
      'a writable root file system',
      changed(
        app,
        'Deployment/dx-proxy',
        (o) => (container(o).securityContext.readOnlyRootFilesystem = false),
      ),
      /dx-proxy container proxy: readOnlyRootFilesystem must be true/,
    ],
    [
      'a Deployment without the schema check',
      changed(app, 'Deployment/dx-worker', (o) => delete o.spec.template.spec.initContainers),
      /Deployment\/dx-worker: no init container runs `migrate --check`/,
    ],
    [
      'a Service aimed at a port the pods do not have',
      changed(app, 'Service/dx-api', (o) => (o.spec.ports[0].targetPort = 'htp')),
      /Service\/dx-api: port 8080 targets htp, which Deployment\/dx-api does not expose/,
    ],
  ];
  for (const [mistake, objects, expected] of cases) {
    const problems = layoutProblems(objects);
    assert.ok(
      problems.some((p) => expected.test(p)),
      `${mistake}: expected ${String(expected)} among ${JSON.stringify(problems)}`,
    );
  }

  // One role on another release than the Job.
  const otherImage = changed(
    app,
    'Deployment/dx-worker',
    (o) => (container(o).image = 'registry.example.org/dataset-exchange:0.2.0'),
  );
  assert.match(
    imageProblems({ migrate: renders.migrate, app: otherImage }).join('\n'),
    /the containers run 2 images/,
  );
  // The config component listed before the proxy: its images transformer never sees the proxy.
  const kustomization = join(KUBERNETES_DIR, 'app-with-proxy', 'kustomization.yaml');
  const reordered = readFileSync(kustomization, 'utf8').replace(
    '  - ../proxy\n  - ../config',
    '  - ../config\n  - ../proxy',
  );
  assert.notEqual(reordered, readFileSync(kustomization, 'utf8'));
  const misordered = render('app-with-proxy', new Map([...OPERATOR_FILES, [kustomization, reordered]]));
  assert.match(
    imageProblems({ app: misordered }).join('\n'),
    /^dataset-exchange has no tag or digest \(the images transformer missed app: Deployment\/dx-proxy schema-check; app: Deployment\/dx-proxy proxy\)$/m,
  );

  // The schemas: a wrong type, a wrong enum, an API Kubernetes has removed; then an unknown field.
  const wrongType = changed(app, 'Deployment/dx-worker', (o) => (o.spec.replicas = '2'));
  assert.match(
    schemaProblems(wrongType).join('\n'),
    /Deployment\/dx-worker: data\/spec\/replicas must be integer/,
  );
  const wrongEnum = changed(app, 'Deployment/dx-api', (o) => (container(o).imagePullPolicy = 'Sometimes'));
  assert.match(
    schemaProblems(wrongEnum).join('\n'),
    /imagePullPolicy must be equal to one of the allowed values/,
  );
  const removedApi = changed(
    app,
    'HorizontalPodAutoscaler/dx-api',
    (o) => (o.apiVersion = 'autoscaling/v2beta2'),
  );
  assert.match(
    schemaProblems(removedApi).join('\n'),
    /autoscaling\/v2beta2 HorizontalPodAutoscaler is not an API this layout may use/,
  );
  const typo = changed(app, 'Deployment/dx-api', (o) => (container(o).readinessProbe.initialDelaySecond = 5));
  assert.deepEqual(schemaProblems(typo), [], 'the JSON schemas alone let an unknown field through');
  assert.match(
    unknownFieldProblems(typo).join('\n'),
    /Deployment\/dx-api: .*'"initialDelaySecond"' does not exist in type 'IProbe'/,
  );
});
