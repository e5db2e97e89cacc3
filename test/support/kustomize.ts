// Renders a kustomization as `kubectl apply -k` would, for the subset deploy/kubernetes uses:
// resources (files and directories), components, configMapGenerator and secretGenerator (env
// files; names with kustomize's content hash, and the references to them rewritten), and images.
// CI has no kubectl recent enough (Debian's is 1.20, without components), so the tests render with
// this; any other kustomization field is refused rather than ignored, so the subset cannot fall
// silently behind the files.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative, resolve, sep } from 'node:path';
import { parseAllDocuments, parse } from 'yaml';

/** A Kubernetes object as YAML gives it. */
export type KubeObject = Record<string, unknown> & {
  apiVersion: string;
  kind: string;
  metadata: { name: string; [key: string]: unknown };
};

export interface RenderOptions {
  /** File contents by absolute path, used instead of (or in the absence of) the file on disk. */
  files?: ReadonlyMap<string, string>;
}

interface Generator {
  name: string;
  envs: string[];
}

interface ImageRule {
  name: string;
  newName?: string;
  newTag?: string;
}

interface Kustomization {
  apiVersion: string;
  kind: 'Kustomization' | 'Component';
  resources?: string[];
  components?: string[];
  configMapGenerator?: Generator[];
  secretGenerator?: Generator[];
  images?: ImageRule[];
}

const FIELDS = new Set([
  'apiVersion',
  'kind',
  'resources',
  'components',
  'configMapGenerator',
  'secretGenerator',
  'images',
]);
const KINDS = {
  Kustomization: 'kustomize.config.k8s.io/v1beta1',
  Component: 'kustomize.config.k8s.io/v1alpha1',
} as const;

/** What one kustomization level produced: its objects, and generated names by their base name. */
interface Rendered {
  objects: KubeObject[];
  /** `ConfigMap/dx-settings` → `dx-settings-<hash>`. */
  generated: Map<string, string>;
}

/** Renders the kustomization in `dir` (a Kustomization, not a Component). */
export function renderKustomization(dir: string, options: RenderOptions = {}): KubeObject[] {
  const reader = new FileReader(options.files ?? new Map());
  const kustomization = reader.kustomization(resolve(dir), 'Kustomization');
  return build(resolve(dir), kustomization, { objects: [], generated: new Map() }, reader).objects;
}

/** Applies one kustomization (or component) on top of `base`, as kustomize accumulates them. */
function build(dir: string, k: Kustomization, base: Rendered, reader: FileReader): Rendered {
  const acc: Rendered = { objects: [...base.objects], generated: new Map(base.generated) };
  for (const entry of k.resources ?? []) {
    const path = resolve(dir, entry);
    if (isDirectory(path)) {
      const sub = build(path, reader.kustomization(path, 'Kustomization'), emptyRendered(), reader);
      acc.objects.push(...sub.objects);
      for (const [key, value] of sub.generated) acc.generated.set(key, value);
    } else {
      acc.objects.push(...reader.objects(reader.within(dir, path)));
    }
  }
  let result = acc;
  for (const entry of k.components ?? []) {
    const path = resolve(dir, entry);
    result = build(path, reader.kustomization(path, 'Component'), result, reader);
  }
  for (const [kind, generators] of [
    ['ConfigMap', k.configMapGenerator ?? []],
    ['Secret', k.secretGenerator ?? []],
  ] as const) {
    for (const generator of generators) {
      const data = new Map<string, string>();
      for (const file of generator.envs) {
        for (const [key, value] of parseEnvFile(reader.text(reader.within(dir, resolve(dir, file))), file)) {
          if (data.has(key)) throw new Error(`${generator.name}: ${key} is set twice`);
          data.set(key, value);
        }
      }
      const object = generatedObject(kind, generator.name, data);
      const id = `${kind}/${generator.name}`;
      if (result.generated.has(id)) throw new Error(`${id} is generated twice`);
      result.generated.set(id, object.metadata.name);
      result.objects.push(object);
    }
  }
  for (const rule of k.images ?? []) for (const object of result.objects) setImages(object, rule);
  for (const object of result.objects) rewriteReferences(object, result.generated);
  return result;
}

function emptyRendered(): Rendered {
  return { objects: [], generated: new Map() };
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

/** Reads files, preferring the caller's replacements; paths stay inside their kustomization. */
class FileReader {
  constructor(private readonly files: ReadonlyMap<string, string>) {}

  text(path: string): string {
    const replaced = this.files.get(path);
    if (replaced !== undefined) return replaced;
    if (!existsSync(path)) throw new Error(`${path}: no such file (kustomize stops here too)`);
    return readFileSync(path, 'utf8');
  }

  /** kustomize's default load restriction: a file must be in or below the kustomization. */
  within(dir: string, path: string): string {
    const rel = relative(dir, path);
    if (rel.startsWith(`..${sep}`) || rel === '..') throw new Error(`${path} is outside ${dir}`);
    return path;
  }

  kustomization(dir: string, kind: Kustomization['kind']): Kustomization {
    const file = join(dir, 'kustomization.yaml');
    const k = parse(this.text(file)) as Kustomization;
    const unknown = Object.keys(k).filter((field) => !FIELDS.has(field));
    if (unknown.length > 0)
      throw new Error(`${file}: fields outside the rendered subset: ${unknown.join(', ')}`);
    if (k.kind !== kind || k.apiVersion !== KINDS[kind]) {
      throw new Error(`${file}: expected ${KINDS[kind]} ${kind}, got ${k.apiVersion} ${k.kind}`);
    }
    for (const g of [...(k.configMapGenerator ?? []), ...(k.secretGenerator ?? [])]) {
      const extra = Object.keys(g).filter((field) => field !== 'name' && field !== 'envs');
      if (extra.length > 0)
        throw new Error(`${file}: generator fields outside the subset: ${extra.join(', ')}`);
    }
    for (const rule of k.images ?? []) {
      const extra = Object.keys(rule).filter((field) => !['name', 'newName', 'newTag'].includes(field));
      if (extra.length > 0) throw new Error(`${file}: image fields outside the subset: ${extra.join(', ')}`);
    }
    return k;
  }

  objects(file: string): KubeObject[] {
    return parseAllDocuments(this.text(file))
      .map((doc) => {
        if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors[0]!.message}`);
        return doc.toJS() as KubeObject | null;
      })
      .filter((object): object is KubeObject => object !== null);
  }
}

/**
 * kustomize's env-file reading: `KEY=value` lines, the value taken as is (quotes included), blank
 * lines and `#` comments skipped, a key that is not an environment variable name refused.
 */
export function parseEnvFile(text: string, name: string): [string, string][] {
  const pairs: [string, string][] = [];
  text
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .forEach((raw, index) => {
      const line = raw.trimStart();
      if (line === '' || line.startsWith('#')) return;
      const eq = line.indexOf('=');
      const key = eq < 0 ? line : line.slice(0, eq);
      if (!/^[-._a-zA-Z][-._a-zA-Z0-9]*$/.test(key))
        throw new Error(`${name}:${index + 1}: ${key} is not a key`);
      // A line without `=` takes the value from kustomize's own environment: never wanted here.
      if (eq < 0)
        throw new Error(`${name}:${index + 1}: ${key} has no value (kustomize would read its environment)`);
      pairs.push([key, line.slice(eq + 1)]);
    });
  return pairs;
}

function generatedObject(
  kind: 'ConfigMap' | 'Secret',
  name: string,
  values: Map<string, string>,
): KubeObject {
  const sorted = [...values].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const data = Object.fromEntries(
    kind === 'Secret' ? sorted.map(([k, v]) => [k, Buffer.from(v).toString('base64')]) : sorted,
  );
  // kustomize looks the name up as one field called "metadata/name", finds none and hashes ''.
  const hashed = kind === 'Secret' ? { data, kind, name: '', type: 'Opaque' } : { data, kind, name: '' };
  const suffix = kustomizeHash(goJson(hashed));
  return {
    apiVersion: 'v1',
    kind,
    metadata: { name: `${name}-${suffix}` },
    data,
    ...(kind === 'Secret' ? { type: 'Opaque' } : {}),
  };
}

/** kustomize's name suffix: the first ten hex digits of a SHA-256, some swapped for consonants. */
function kustomizeHash(encoded: string): string {
  const swap: Record<string, string> = { '0': 'g', '1': 'h', '3': 'k', a: 'm', e: 't' };
  return [...createHash('sha256').update(encoded).digest('hex').slice(0, 10)]
    .map((c) => swap[c] ?? c)
    .join('');
}

/** JSON as Go's encoding/json writes it (the hash's input): sorted keys, <, > and & escaped. */
function goJson(value: unknown): string {
  const sortKeys = (v: unknown): unknown =>
    v !== null && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
        )
      : v;
  return JSON.stringify(sortKeys(value)).replace(
    /[<>&\u2028\u2029]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** The pod spec of a workload, or null for objects that run no pods. */
export function podSpecOf(object: KubeObject): Record<string, unknown> | null {
  if (!['Deployment', 'Job', 'StatefulSet', 'DaemonSet'].includes(object.kind)) return null;
  const spec = object.spec as { template?: { spec?: Record<string, unknown> } } | undefined;
  return spec?.template?.spec ?? null;
}

interface ContainerRefs {
  image?: string;
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  env?: { valueFrom?: { configMapKeyRef?: { name: string }; secretKeyRef?: { name: string } } }[];
}

function containersOf(pod: Record<string, unknown>): ContainerRefs[] {
  return [...((pod.initContainers as ContainerRefs[]) ?? []), ...((pod.containers as ContainerRefs[]) ?? [])];
}

/** The images transformer: `name[:tag]` becomes `newName:newTag` (each kept where not given). */
function setImages(object: KubeObject, rule: ImageRule): void {
  const pod = podSpecOf(object);
  if (pod === null) return;
  for (const container of containersOf(pod)) {
    if (container.image === undefined) continue;
    const match = /^(.*?)(?::([^:/@]+))?(@.*)?$/.exec(container.image);
    if (match?.[1] !== rule.name) continue;
    const tag = rule.newTag ?? match[2];
    container.image = `${rule.newName ?? rule.name}${tag !== undefined ? `:${tag}` : ''}${match[3] ?? ''}`;
  }
}

/** Points references to generated ConfigMaps and Secrets at their hash-suffixed names. */
function rewriteReferences(object: KubeObject, generated: Map<string, string>): void {
  const pod = podSpecOf(object);
  if (pod === null) return;
  const rename = (kind: string, ref: { name: string } | undefined) => {
    const to = ref !== undefined ? generated.get(`${kind}/${ref.name}`) : undefined;
    if (ref !== undefined && to !== undefined) ref.name = to;
  };
  for (const container of containersOf(pod)) {
    for (const source of container.envFrom ?? []) {
      rename('ConfigMap', source.configMapRef);
      rename('Secret', source.secretRef);
    }
    for (const variable of container.env ?? []) {
      rename('ConfigMap', variable.valueFrom?.configMapKeyRef);
      rename('Secret', variable.valueFrom?.secretKeyRef);
    }
  }
  for (const volume of (pod.volumes as Record<string, { name?: string; secretName?: string }>[]) ?? []) {
    if (volume.configMap !== undefined) rename('ConfigMap', volume.configMap as { name: string });
    const secret = volume.secret;
    if (secret?.secretName !== undefined) {
      const to = generated.get(`Secret/${secret.secretName}`);
      if (to !== undefined) secret.secretName = to;
    }
  }
}

/** The directory of this repository's Kubernetes layout (tests run from the repository's root). */
export const KUBERNETES_DIR = join(process.cwd(), 'deploy', 'kubernetes');
