// What a rendered Kubernetes layout must hold beyond its schemas: each check returns one line per
// problem, naming the object, so a test can show both that the layout holds and that each check
// catches the mistake it is for.
import ts from 'typescript';
import { join } from 'node:path';
import { ConfigMap, Secret, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { Job } from 'kubernetes-models/batch/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { HorizontalPodAutoscaler } from 'kubernetes-models/autoscaling/v2';
import { podSpecOf, type KubeObject } from '../support/kustomize.js';
import { isKnownVariable, SECRET_SETTINGS } from './settings.js';

/**
 * The API versions the layout may use, each with its kubernetes-models class (JSON schemas of
 * Kubernetes 1.36) and its TypeScript interface. kubernetes-models also carries APIs that
 * Kubernetes has removed (autoscaling/v2beta2, policy/v1beta1, …): only these are accepted.
 */
const MODELS = {
  'v1/ConfigMap': { model: ConfigMap, module: 'kubernetes-models/v1/ConfigMap', type: 'IConfigMap' },
  'v1/Secret': { model: Secret, module: 'kubernetes-models/v1/Secret', type: 'ISecret' },
  'v1/Service': { model: Service, module: 'kubernetes-models/v1/Service', type: 'IService' },
  'apps/v1/Deployment': {
    model: Deployment,
    module: 'kubernetes-models/apps/v1/Deployment',
    type: 'IDeployment',
  },
  'batch/v1/Job': { model: Job, module: 'kubernetes-models/batch/v1/Job', type: 'IJob' },
  'policy/v1/PodDisruptionBudget': {
    model: PodDisruptionBudget,
    module: 'kubernetes-models/policy/v1/PodDisruptionBudget',
    type: 'IPodDisruptionBudget',
  },
  'autoscaling/v2/HorizontalPodAutoscaler': {
    model: HorizontalPodAutoscaler,
    module: 'kubernetes-models/autoscaling/v2/HorizontalPodAutoscaler',
    type: 'IHorizontalPodAutoscaler',
  },
} as const;
type ModelKey = keyof typeof MODELS;

export const idOf = (o: KubeObject): string => `${o.kind}/${o.metadata.name}`;

/** Schema problems: an API version outside MODELS, or what the JSON schema refuses. */
export function schemaProblems(objects: readonly KubeObject[]): string[] {
  const problems: string[] = [];
  for (const object of objects) {
    const entry = MODELS[`${object.apiVersion}/${object.kind}` as ModelKey] as
      (typeof MODELS)[ModelKey] | undefined;
    if (entry === undefined) {
      problems.push(`${idOf(object)}: ${object.apiVersion} ${object.kind} is not an API this layout may use`);
      continue;
    }
    try {
      // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each class takes its own shape
      new (entry.model as any)(structuredClone(object)).validate();
    } catch (err) {
      problems.push(`${idOf(object)}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return problems;
}

/**
 * Unknown fields, which the JSON schemas let through (they do not close objects) but the API
 * server refuses (kubectl's strict field validation): each object is type-checked as an object
 * literal against its kubernetes-models interface, where TypeScript refuses properties it does not
 * know. One problem per object at least; a fixed one may reveal the next.
 */
export function unknownFieldProblems(objects: readonly KubeObject[]): string[] {
  const keys = objects.map((o) => `${o.apiVersion}/${o.kind}` as ModelKey).filter((k) => k in MODELS);
  const used = [...new Set(keys)];
  const header = used.map((k) => `import type { ${MODELS[k].type} } from '${MODELS[k].module}';`);
  const lines = objects.map((o, i) => {
    const key = `${o.apiVersion}/${o.kind}` as ModelKey;
    return key in MODELS ? `export const o${i}: ${MODELS[key].type} = ${JSON.stringify(o)};` : '';
  });
  const file = join(process.cwd(), '__rendered_manifests__.ts');
  const source = [...header, ...lines].join('\n');
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    target: ts.ScriptTarget.ES2022,
    lib: ['lib.es2022.d.ts'],
    types: [],
    skipLibCheck: true,
  };
  const host = ts.createCompilerHost(options);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (name, language, ...rest) =>
    name === file ? ts.createSourceFile(name, source, language) : getSourceFile(name, language, ...rest);
  host.fileExists = (name) => name === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const line =
      d.file !== undefined && d.start !== undefined ? d.file.getLineAndCharacterOfPosition(d.start).line : -1;
    const object = objects[line - header.length];
    const where =
      d.file?.fileName === file && object !== undefined ? idOf(object) : (d.file?.fileName ?? 'typescript');
    return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
  });
}

// The shapes the checks read (the schemas have already vouched for the types).
interface Probe {
  httpGet?: { path?: string; port?: number | string };
}
interface Container {
  name: string;
  image?: string;
  args?: string[];
  ports?: { name?: string; containerPort: number }[];
  envFrom?: {
    configMapRef?: { name: string; optional?: boolean };
    secretRef?: { name: string; optional?: boolean };
  }[];
  env?: {
    name: string;
    value?: string;
    valueFrom?: {
      configMapKeyRef?: { name: string; key: string };
      secretKeyRef?: { name: string; key: string };
    };
  }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  resources?: { requests?: Record<string, string | number>; limits?: Record<string, string | number> };
  securityContext?: {
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    capabilities?: { drop?: string[] };
  };
  volumeMounts?: { name: string; mountPath: string }[];
}
interface PodSpec {
  containers: Container[];
  initContainers?: Container[];
  volumes?: { name: string; emptyDir?: unknown }[];
  terminationGracePeriodSeconds?: number;
  enableServiceLinks?: boolean;
  automountServiceAccountToken?: boolean;
  restartPolicy?: string;
  securityContext?: { runAsNonRoot?: boolean; runAsUser?: number };
}
interface LabelSelector {
  matchLabels?: Record<string, string>;
  matchExpressions?: unknown[];
}

const pod = (o: KubeObject) => podSpecOf(o) as PodSpec | null;
const byKind = (objects: readonly KubeObject[], kind: string) => objects.filter((o) => o.kind === kind);
const specOf = <T>(o: KubeObject) => o.spec as T;
const podLabels = (o: KubeObject) =>
  (o.spec as { template?: { metadata?: { labels?: Record<string, string> } } }).template?.metadata?.labels ??
  {};

/** Whether `selector` (matchLabels only: the layout uses no expressions) selects `labels`. */
function selects(
  selector: LabelSelector | Record<string, string> | undefined,
  labels: Record<string, string>,
) {
  const matchLabels = selector !== undefined && 'matchLabels' in selector ? selector.matchLabels : selector;
  if (matchLabels === undefined || Object.keys(matchLabels).length === 0) return false;
  return Object.entries(matchLabels).every(([k, v]) => labels[k] === v);
}

/**
 * Each container's environment as the kubelet builds it: envFrom in order (later sources win),
 * then env. Values come from the rendered ConfigMaps and Secrets; a missing source or key is a
 * problem, reported once.
 */
export function environmentOf(
  container: Container,
  objects: readonly KubeObject[],
  problems: string[],
  where: string,
) {
  const env = new Map<string, string>();
  const find = (kind: 'ConfigMap' | 'Secret', name: string) => {
    const source = objects.find((o) => o.kind === kind && o.metadata.name === name);
    if (source === undefined) {
      problems.push(`${where}: reads ${kind} ${name}, which the layout does not have`);
      return null;
    }
    const data = (source.data ?? {}) as Record<string, string>;
    return new Map(
      Object.entries(data).map(([k, v]) => [k, kind === 'Secret' ? Buffer.from(v, 'base64').toString() : v]),
    );
  };
  for (const source of container.envFrom ?? []) {
    const ref = source.configMapRef ?? source.secretRef;
    const kind = source.configMapRef !== undefined ? 'ConfigMap' : 'Secret';
    if (ref === undefined) continue;
    if (ref.optional === true)
      problems.push(`${where}: ${kind} ${ref.name} is optional; a missing one must stop the pod`);
    for (const [k, v] of find(kind, ref.name) ?? []) env.set(k, v);
  }
  for (const variable of container.env ?? []) {
    const ref = variable.valueFrom?.configMapKeyRef ?? variable.valueFrom?.secretKeyRef;
    if (ref === undefined) {
      env.set(variable.name, variable.value ?? '');
      continue;
    }
    const kind = variable.valueFrom?.configMapKeyRef !== undefined ? 'ConfigMap' : 'Secret';
    const data = find(kind, ref.name);
    if (data === null) continue;
    const value = data.get(ref.key);
    if (value === undefined)
      problems.push(
        `${where}: ${variable.name} reads key ${ref.key} of ${kind} ${ref.name}, which has no such key`,
      );
    else env.set(variable.name, value);
  }
  return env;
}

/** The seconds a process may take to stop: SHUTDOWN_DELAY_MS + SHUTDOWN_GRACE_MS + its own 5 s. */
const PROCESS_DEADLINE_EXTRA_S = 5;
/** What Kubernetes' grace period must add on top, so the process always ends itself first. */
const GRACE_MARGIN_S = 5;

/** Every invariant of the layout that the schemas do not check. */
export function layoutProblems(objects: readonly KubeObject[]): string[] {
  const problems: string[] = [];
  const deployments = byKind(objects, 'Deployment');
  const workloads = [...deployments, ...byKind(objects, 'Job')];
  const hpas = byKind(objects, 'HorizontalPodAutoscaler');

  for (const workload of workloads) {
    const id = idOf(workload);
    const spec = pod(workload)!;
    problems.push(...podSecurityProblems(id, spec));
    const main = spec.containers;
    const envs = new Map<Container, Map<string, string>>();
    for (const container of [...(spec.initContainers ?? []), ...main]) {
      const where = `${id} container ${container.name}`;
      const env = environmentOf(container, objects, problems, where);
      envs.set(container, env);
      for (const name of env.keys()) {
        if (!isKnownVariable(name)) problems.push(`${where}: ${name} is not a setting of src/config.ts`);
      }
      if (workload.kind === 'Deployment' && main.includes(container)) {
        problems.push(...probeProblems(where, container, env));
        problems.push(...graceProblems(id, spec, env));
      }
    }
    if (workload.kind === 'Deployment') {
      problems.push(...schemaCheckProblems(id, spec, envs));
      const selector = specOf<{ selector?: LabelSelector }>(workload).selector;
      if (!selects(selector, podLabels(workload)))
        problems.push(`${id}: its selector does not select its own pods`);
    } else if (!['Never', 'OnFailure'].includes(spec.restartPolicy ?? '')) {
      problems.push(`${id}: restartPolicy must be Never or OnFailure`);
    }
  }

  for (const configMap of byKind(objects, 'ConfigMap')) {
    for (const key of Object.keys(configMap.data ?? {})) {
      if (SECRET_SETTINGS.includes(key))
        problems.push(`${idOf(configMap)}: ${key} is a secret; it belongs in the Secret`);
    }
  }

  const selected = (selector: LabelSelector | Record<string, string> | undefined) =>
    deployments.filter((d) => selects(selector, podLabels(d)));
  const minimumReplicas = (d: KubeObject) => {
    const hpa = hpas.find(
      (h) => specOf<{ scaleTargetRef: { name: string } }>(h).scaleTargetRef.name === d.metadata.name,
    );
    return hpa !== undefined
      ? (specOf<{ minReplicas?: number }>(hpa).minReplicas ?? 1)
      : (specOf<{ replicas?: number }>(d).replicas ?? 1);
  };

  for (const pdb of byKind(objects, 'PodDisruptionBudget')) {
    const spec = specOf<{
      selector?: LabelSelector;
      minAvailable?: number | string;
      maxUnavailable?: number | string;
    }>(pdb);
    const targets = selected(spec.selector);
    if (targets.length !== 1) {
      problems.push(
        `${idOf(pdb)}: selects ${targets.length} Deployments (${targets.map(idOf).join(', ') || 'none'}), not one`,
      );
      continue;
    }
    const target = targets[0]!;
    if (typeof spec.minAvailable === 'number' && spec.minAvailable >= minimumReplicas(target)) {
      problems.push(
        `${idOf(pdb)}: minAvailable ${spec.minAvailable} with at least ${minimumReplicas(target)} replicas of ${idOf(target)} blocks every node drain`,
      );
    }
    if (spec.maxUnavailable === 0 || spec.maxUnavailable === '0%')
      problems.push(`${idOf(pdb)}: maxUnavailable 0 blocks every node drain`);
  }
  for (const deployment of deployments) {
    const pdbs = byKind(objects, 'PodDisruptionBudget').filter((p) =>
      selects(specOf<{ selector?: LabelSelector }>(p).selector, podLabels(deployment)),
    );
    if (pdbs.length !== 1)
      problems.push(`${idOf(deployment)}: has ${pdbs.length} PodDisruptionBudgets, not one`);
  }

  for (const hpa of hpas) {
    const spec = specOf<{
      scaleTargetRef: { apiVersion?: string; kind: string; name: string };
      minReplicas?: number;
      maxReplicas: number;
      metrics?: { type: string; resource?: { name: string; target: { type: string } } }[];
    }>(hpa);
    const ref = spec.scaleTargetRef;
    const target = deployments.find(
      (d) => ref.kind === 'Deployment' && ref.apiVersion === 'apps/v1' && d.metadata.name === ref.name,
    );
    if (target === undefined) {
      problems.push(
        `${idOf(hpa)}: scales ${ref.apiVersion ?? '?'} ${ref.kind} ${ref.name}, which the layout does not have`,
      );
      continue;
    }
    if (specOf<{ replicas?: number }>(target).replicas !== undefined) {
      problems.push(
        `${idOf(target)}: sets replicas although ${idOf(hpa)} owns the count (each apply would reset it)`,
      );
    }
    if ((spec.minReplicas ?? 1) > spec.maxReplicas)
      problems.push(`${idOf(hpa)}: minReplicas above maxReplicas`);
    for (const metric of spec.metrics ?? []) {
      const resource = metric.resource;
      if (metric.type !== 'Resource' || resource?.target.type !== 'Utilization') continue;
      for (const container of pod(target)!.containers) {
        if (container.resources?.requests?.[resource.name] === undefined) {
          problems.push(
            `${idOf(hpa)}: scales on ${resource.name} utilization, but ${idOf(target)} container ${container.name} requests no ${resource.name}`,
          );
        }
      }
    }
  }

  for (const service of byKind(objects, 'Service')) {
    const spec = specOf<{
      selector?: Record<string, string>;
      ports: { name?: string; port: number; targetPort?: number | string }[];
    }>(service);
    const targets = selected(spec.selector);
    if (targets.length !== 1) {
      problems.push(`${idOf(service)}: selects ${targets.length} Deployments, not one`);
      continue;
    }
    const ports = pod(targets[0]!)!.containers.flatMap((c) => c.ports ?? []);
    for (const port of spec.ports) {
      const target = port.targetPort ?? port.port;
      if (!ports.some((p) => p.name === target || p.containerPort === target)) {
        problems.push(
          `${idOf(service)}: port ${port.port} targets ${target}, which ${idOf(targets[0]!)} does not expose`,
        );
      }
    }
  }
  return problems;
}

function podSecurityProblems(id: string, spec: PodSpec): string[] {
  const problems: string[] = [];
  if (spec.securityContext?.runAsNonRoot !== true || spec.securityContext.runAsUser !== 1000) {
    problems.push(`${id}: pods must run as non-root uid 1000 (securityContext runAsNonRoot, runAsUser)`);
  }
  if (spec.enableServiceLinks !== false) {
    problems.push(
      `${id}: enableServiceLinks must be false (service links add variables such as DX_API_PORT)`,
    );
  }
  if (spec.automountServiceAccountToken !== false)
    problems.push(`${id}: the pods need no API token (automountServiceAccountToken)`);
  const emptyDirs = new Set((spec.volumes ?? []).filter((v) => v.emptyDir !== undefined).map((v) => v.name));
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
    const where = `${id} container ${container.name}`;
    const sc = container.securityContext;
    if (sc?.allowPrivilegeEscalation !== false)
      problems.push(`${where}: allowPrivilegeEscalation must be false`);
    if (sc?.readOnlyRootFilesystem !== true) problems.push(`${where}: readOnlyRootFilesystem must be true`);
    if (!(sc?.capabilities?.drop ?? []).includes('ALL'))
      problems.push(`${where}: must drop ALL capabilities`);
    if (!(container.volumeMounts ?? []).some((m) => m.mountPath === '/tmp' && emptyDirs.has(m.name))) {
      problems.push(`${where}: /tmp must be an emptyDir (the root file system is read-only)`);
    }
    if (
      container.resources?.requests?.memory === undefined ||
      container.resources.limits?.memory === undefined
    ) {
      problems.push(`${where}: needs a memory request and limit`);
    }
  }
  return problems;
}

/** Liveness on /healthz and readiness on /readyz, both on the port ADMIN_PORT sets. */
function probeProblems(where: string, container: Container, env: Map<string, string>): string[] {
  const problems: string[] = [];
  const adminPort = Number(env.get('ADMIN_PORT'));
  if (!Number.isInteger(adminPort) || adminPort <= 0) {
    return [`${where}: ADMIN_PORT is not set explicitly, so the probes' port cannot be checked`];
  }
  const expected: [keyof Container, string, boolean][] = [
    ['livenessProbe', '/healthz', true],
    ['readinessProbe', '/readyz', true],
    ['startupProbe', '/healthz', false],
  ];
  for (const [field, path, required] of expected) {
    const probe = container[field] as Probe | undefined;
    if (probe === undefined) {
      if (required) problems.push(`${where}: no ${field}`);
      continue;
    }
    const get = probe.httpGet;
    if (get?.path !== path)
      problems.push(`${where}: ${field} must GET ${path} (got ${get?.path ?? 'no httpGet'})`);
    const port =
      typeof get?.port === 'string'
        ? container.ports?.find((p) => p.name === get.port)?.containerPort
        : get?.port;
    if (port !== adminPort) {
      problems.push(
        `${where}: ${field} asks port ${String(get?.port)} (${String(port)}), not ADMIN_PORT ${adminPort}`,
      );
    }
  }
  if (!(container.ports ?? []).some((p) => p.containerPort === adminPort)) {
    problems.push(`${where}: does not declare its admin port ${adminPort}`);
  }
  return problems;
}

/** terminationGracePeriodSeconds against the process's own deadline, from the explicit settings. */
function graceProblems(id: string, spec: PodSpec, env: Map<string, string>): string[] {
  const delay = env.get('SHUTDOWN_DELAY_MS');
  const grace = env.get('SHUTDOWN_GRACE_MS');
  if (delay === undefined || grace === undefined || delay === '' || grace === '') {
    return [`${id}: SHUTDOWN_DELAY_MS and SHUTDOWN_GRACE_MS must both be set explicitly`];
  }
  const needed = (Number(delay) + Number(grace)) / 1000 + PROCESS_DEADLINE_EXTRA_S + GRACE_MARGIN_S;
  const period = spec.terminationGracePeriodSeconds ?? 30;
  return period >= needed
    ? []
    : [
        `${id}: terminationGracePeriodSeconds ${period} < ${needed} (SHUTDOWN_DELAY_MS ${delay} + SHUTDOWN_GRACE_MS ${grace} + ${PROCESS_DEADLINE_EXTRA_S} s + ${GRACE_MARGIN_S} s margin)`,
      ];
}

/** An init container runs `dx migrate --check` from the same image, against the same database. */
function schemaCheckProblems(id: string, spec: PodSpec, envs: Map<Container, Map<string, string>>): string[] {
  const check = (spec.initContainers ?? []).find((c) => c.args?.join(' ') === 'migrate --check');
  if (check === undefined) return [`${id}: no init container runs \`migrate --check\``];
  const problems: string[] = [];
  for (const container of spec.containers) {
    if (container.image !== check.image) {
      problems.push(
        `${id}: the schema check runs ${check.image}, container ${container.name} ${container.image}`,
      );
    }
    if (envs.get(container)?.get('DATABASE_URL') !== envs.get(check)?.get('DATABASE_URL')) {
      problems.push(`${id}: the schema check reads another DATABASE_URL than container ${container.name}`);
    }
  }
  return problems;
}

/** One image for every container of every render: a role newer than the Job would outrun its schema. */
export function imageProblems(renders: Record<string, readonly KubeObject[]>): string[] {
  const seen = new Map<string, string[]>();
  for (const [render, objects] of Object.entries(renders)) {
    for (const workload of objects) {
      const spec = pod(workload);
      if (spec === null) continue;
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        const image = c.image ?? '(none)';
        seen.set(image, [...(seen.get(image) ?? []), `${render}: ${idOf(workload)} ${c.name}`]);
      }
    }
  }
  const problems: string[] = [];
  if (seen.size !== 1) {
    problems.push(
      `the containers run ${seen.size} images: ${[...seen].map(([i, w]) => `${i} (${w.join('; ')})`).join(' / ')}`,
    );
  }
  for (const [image, where] of seen) {
    if (!/[:@]/.test(image.split('/').pop() ?? ''))
      problems.push(`${image} has no tag or digest (the images transformer missed ${where.join('; ')})`);
  }
  return problems;
}
