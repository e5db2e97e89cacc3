// deploy/compose.yaml with deploy/example.env, as `docker compose` reads them (there is no Docker
// here): every ${VAR} has its line in example.env; the published example starts nothing, its
// secrets being empty; once they are filled in the file is valid against the Compose
// Specification's schema and every role's settings pass the service's own validation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { loadConfig } from '../../src/config.js';
import { parseEnvFile } from '../support/kustomize.js';
import { isKnownVariable, SECRET_SETTINGS } from './settings.js';

const DEPLOY = join(process.cwd(), 'deploy');
const composeText = readFileSync(join(DEPLOY, 'compose.yaml'), 'utf8');
const exampleText = readFileSync(join(DEPLOY, 'example.env'), 'utf8');
const example = new Map(parseEnvFile(exampleText, 'example.env'));

/** The secrets of example.env, filled in as the operator does. */
const FILLED = {
  POSTGRES_PASSWORD: randomBytes(24).toString('hex'),
  SIGNING_SECRET: randomBytes(36).toString('base64'),
  S3_ACCESS_KEY_ID: randomBytes(10).toString('hex'),
  S3_SECRET_ACCESS_KEY: randomBytes(30).toString('base64'),
};
const filled = new Map([...example, ...Object.entries(FILLED)]);

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- a compose file is any YAML
type Any = any;

/** A `${…}` of compose's interpolation: the forms this file may use. */
const EXPRESSION = /\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}/g;

/**
 * Compose's interpolation of one value: ${VAR}, ${VAR:-default} (unset or empty), ${VAR-default}
 * (unset), ${VAR:?message} (refused when unset or empty), ${VAR?message}, and $$ for a dollar.
 * A `$` in any other form is refused, so the file cannot slip past this subset.
 */
function interpolate(value: string, env: ReadonlyMap<string, string>, errors: string[]): string {
  const out = value.replace(
    /\$\$|\$\{([A-Z0-9_]+)(?:(:?[-?])([^}]*))?\}|\$/g,
    (whole, name?: string, op?: string, arg?: string) => {
      if (whole === '$$') return '$';
      if (name === undefined) throw new Error(`a $ compose would read otherwise: ${value}`);
      const v = env.get(name);
      const missing = op?.startsWith(':') === true ? v === undefined || v === '' : v === undefined;
      if (op === ':-' || op === '-') return missing ? (arg ?? '') : (v ?? '');
      if ((op === ':?' || op === '?') && missing) {
        errors.push(`${name}: ${arg ?? ''}`);
        return '';
      }
      return v ?? '';
    },
  );
  return out;
}

/** The file as compose loads it: YAML with merge keys, every string value interpolated. */
function load(env: ReadonlyMap<string, string>): { model: Any; errors: string[] } {
  const errors: string[] = [];
  const walk = (node: unknown): unknown =>
    typeof node === 'string'
      ? interpolate(node, env, errors)
      : Array.isArray(node)
        ? node.map(walk)
        : node !== null && typeof node === 'object'
          ? Object.fromEntries(Object.entries(node).map(([k, v]) => [k, walk(v)]))
          : node;
  return { model: walk(parse(composeText, { merge: true })), errors };
}

/** Services with the profiles that start them (none: always). */
const services = (model: Any) => Object.entries(model.services as Record<string, Any>);
const ROLE_SERVICES = ['migrate', 'api', 'worker', 'proxy'];

/** What loadConfig sees in a role's container: its environment, and --role from its command. */
function roleEnv(model: Any, service: string): Record<string, string> {
  const s = model.services[service];
  const command = s.command as string[];
  const env = { ...(s.environment as Record<string, string>) };
  if (command[0] === 'serve' && command[1] === '--role') env.ROLES = command[2]!;
  return env;
}

void test('every ${VAR} of compose.yaml has its line in example.env', () => {
  const used = new Set([...composeText.matchAll(EXPRESSION)].map((m) => m[1]!));
  assert.ok(used.size >= 10, `found ${used.size}`);
  assert.deepEqual(
    [...used].filter((name) => !example.has(name)),
    [],
  );
  // No unbraced $VAR, which this test's interpolation (and a reader) could miss.
  assert.doesNotMatch(composeText.replace(/\$\$/g, ''), /\$(?!\{)/);
});

void test('the published example starts nothing: compose refuses each of its empty secrets', () => {
  const { errors } = load(example);
  const refused = [...new Set(errors.map((e) => e.split(':')[0]))].sort();
  assert.deepEqual(refused, [
    'POSTGRES_PASSWORD',
    'S3_ACCESS_KEY_ID',
    'S3_SECRET_ACCESS_KEY',
    'SIGNING_SECRET',
  ]);
  for (const name of refused) assert.equal(example.get(name), '', `${name} is empty in example.env`);
  // Every secret a role is handed comes through a required (`:?`) variable.
  const raw: Any = parse(composeText, { merge: true });
  for (const service of ROLE_SERVICES) {
    const environment = raw.services[service].environment as Record<string, string>;
    const secrets = SECRET_SETTINGS.filter((name) => name in environment);
    assert.ok(secrets.length >= 4, `${service} is handed its secrets`);
    for (const name of secrets) assert.match(environment[name]!, /\$\{[A-Z0-9_]+:\?/, `${service}: ${name}`);
  }
  // A placeholder an operator might type passes compose (it is not empty) but not the service.
  const weak = load(new Map([...filled, ['SIGNING_SECRET', 'change-me']])).model;
  assert.throws(() => loadConfig(roleEnv(weak, 'api')), /SIGNING_SECRET: must be at least 32 characters/);
});

void test('once the secrets are filled in, compose.yaml is valid against the Compose Specification', () => {
  const { model, errors } = load(filled);
  assert.deepEqual(errors, []);
  // dclint ships the Compose Specification's JSON schema; its $schema URL is not one Ajv knows by
  // that spelling, and draft-07 is Ajv's own.
  const { $schema: _, ...schema } = JSON.parse(
    readFileSync(join(process.cwd(), 'node_modules', 'dclint', 'schemas', 'compose.schema.json'), 'utf8'),
  ) as Record<string, unknown>;
  const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
  const valid = (candidate: unknown) => validate(candidate);
  assert.ok(valid(model), JSON.stringify(validate.errors));
  // The schema closes its objects: a misspelt key fails.
  model.services.api.stop_grace_perod = '30s';
  assert.equal(valid(model), false);
  assert.match(JSON.stringify(validate.errors), /"additionalProperty":"stop_grace_perod"/);
});

void test("every role's settings pass the service's own validation; the proxy only with an upstream", () => {
  const { model } = load(filled);
  for (const service of ROLE_SERVICES) {
    const env = roleEnv(model, service);
    for (const name of Object.keys(env)) assert.ok(isKnownVariable(name), `${service}: ${name} is a setting`);
    if (service === 'proxy') {
      assert.throws(() => loadConfig(env), /UPSTREAM_URL: required when the proxy role runs/);
      continue;
    }
    const config = loadConfig(env);
    assert.equal(config.storage.kind, 's3');
    assert.equal(config.signingSecret, FILLED.SIGNING_SECRET);
    assert.equal(config.databaseUrl, `postgres://dx:${FILLED.POSTGRES_PASSWORD}@postgres:5432/dx`);
  }
  const withUpstream = load(new Map([...filled, ['UPSTREAM_URL', 'https://upstream.example.org']])).model;
  assert.deepEqual(loadConfig(roleEnv(withUpstream, 'proxy')).roles, ['proxy']);
  // Unset S3_ENDPOINT means the bundled store; set empty, AWS S3.
  const aws = load(new Map([...filled, ['S3_ENDPOINT', '']])).model;
  const s3 = (m: Any) => {
    const storage = loadConfig(roleEnv(m, 'worker')).storage;
    return storage.kind === 's3' ? storage.s3.endpoint : 'local';
  };
  assert.equal(s3(aws), null);
  assert.equal(
    s3(load(new Map([...filled].filter(([k]) => k !== 'S3_ENDPOINT'))).model),
    'http://seaweedfs:8333',
  );
});

void test('profiles, stop grace periods, health checks and images', () => {
  const { model } = load(filled);
  const profiled = new Map(
    services(model).map(([name, s]) => [name, (s.profiles as string[] | undefined) ?? []]),
  );
  assert.deepEqual(profiled.get('seaweedfs'), ['store']);
  assert.deepEqual(profiled.get('proxy'), ['proxy']);
  for (const [name, s] of services(model)) {
    for (const [dependency, condition] of Object.entries((s.depends_on ?? {}) as Record<string, Any>)) {
      const theirs = profiled.get(dependency);
      assert.ok(theirs !== undefined, `${name} depends on ${dependency}, which is not a service`);
      // A dependency that a profile may leave out must not be required, or compose refuses.
      if (theirs.length > 0 && !theirs.every((p) => profiled.get(name)!.includes(p))) {
        assert.equal(condition.required, false, `${name} → ${dependency} must be required: false`);
      }
      if (condition.condition === 'service_healthy') {
        assert.ok(model.services[dependency].healthcheck !== undefined, `${dependency} has a health check`);
      }
    }
  }
  // The roles stop within their grace period: the drain, in-flight work, the process's own 5 s.
  for (const service of ROLE_SERVICES) {
    const env = roleEnv(model, service);
    const needed = (Number(env.SHUTDOWN_DELAY_MS) + Number(env.SHUTDOWN_GRACE_MS)) / 1000 + 5;
    const grace = /^(\d+)s$/.exec(model.services[service].stop_grace_period as string);
    assert.ok(grace !== null && Number(grace[1]) > needed, `${service}: stop_grace_period above ${needed} s`);
  }
  // Images that are published today, each with a pinned tag.
  const images = services(model)
    .filter(([, s]) => s.build === undefined)
    .map(([, s]) => s.image as string)
    .sort();
  assert.deepEqual(images, ['chrislusf/seaweedfs:4.44', 'postgres:17']);
  for (const [name, s] of services(model).filter(([, s]) => s.build !== undefined)) {
    assert.equal(s.image, 'dataset-exchange:local', `${name} runs the image compose builds`);
  }
});
