// Apps (tech partners) and their public keys. Creating an app also creates its own workspace and
// installation, so its developer can test at once.
import { generateKeyPair as generatePair, createPublicKey, randomBytes, randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import type { AppKeyRow, AppRow } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import type { Db } from './users.js';
import { createWorkspace } from './workspaces.js';
import { connectInstallation } from './installations.js';
import { checkedName, NAME_MAX } from './names.js';
import { readNamePage, type NamePageQuery, type NamePosition } from '../lists/by-name.js';

export const KEY_ALGORITHMS = ['RS256', 'ES256'] as const;
export type KeyAlgorithm = (typeof KEY_ALGORITHMS)[number];

/** Everything an app developer needs after `apps create`; the private key and Workspace Key appear only here. */
export interface CreatedApp {
  app: AppRow;
  kid: string;
  alg: KeyAlgorithm;
  privateKeyPem: string;
  workspaceId: number;
  workspaceKey: string;
  installationId: number;
}

/** A freshly generated key pair, PEM encoded. */
export interface GeneratedKeyPair {
  publicKeyPem: string;
  privateKeyPem: string;
}

const generatePairAsync = promisify(generatePair);

/**
 * Generates an RSA-2048 (RS256) or P-256 (ES256) key pair, off the event loop: an RSA pair takes
 * 0.1 to 0.5 s of CPU, which the API (serving the console) must not stall for.
 */
export async function generateKeyPair(alg: KeyAlgorithm): Promise<GeneratedKeyPair> {
  const publicKeyEncoding = { type: 'spki', format: 'pem' } as const;
  const privateKeyEncoding = { type: 'pkcs8', format: 'pem' } as const;
  const pair =
    alg === 'RS256'
      ? await generatePairAsync('rsa', { modulusLength: 2048, publicKeyEncoding, privateKeyEncoding })
      : await generatePairAsync('ec', { namedCurve: 'P-256', publicKeyEncoding, privateKeyEncoding });
  return { publicKeyPem: pair.publicKey, privateKeyPem: pair.privateKey };
}

const OWN_WORKSPACE = ' (own workspace)';

/**
 * Creates an app with a generated key, its own workspace and its own installation. A caller that
 * runs this in a transaction may pass `keys` made beforehand, so the transaction (which holds
 * SQLite's one connection) does not stay open while the pair is generated.
 */
export async function createApp(
  db: Db,
  input: { name: string; alg: KeyAlgorithm; keys?: GeneratedKeyPair },
): Promise<CreatedApp> {
  const name = checkedName(input.name, 'an app name');
  const keys = input.keys ?? (await generateKeyPair(input.alg));
  const { workspace, workspaceKey } = await createWorkspace(db, {
    // Cut so the workspace's name keeps to the name rule too.
    displayName: `${name.slice(0, NAME_MAX - OWN_WORKSPACE.length)}${OWN_WORKSPACE}`,
    ownerName: `${name} developer`,
  });
  const app = await db
    .insertInto('apps')
    .values({
      id: randomUUID(),
      name,
      owner_workspace_id: workspace.id,
      created_at: nowTimestamp(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  const key = await addAppKey(db, app.id, input.alg, keys.publicKeyPem);
  const installation = await connectInstallation(db, app.id, workspace.id);
  return {
    app,
    kid: key.kid,
    alg: input.alg,
    privateKeyPem: keys.privateKeyPem,
    workspaceId: workspace.id,
    workspaceKey,
    installationId: installation.id,
  };
}

/** Registers a public key (PEM, SPKI) for an app; checks that it suits the algorithm. */
export async function addAppKey(
  db: Db,
  appId: string,
  alg: KeyAlgorithm,
  publicKeyPem: string,
): Promise<AppKeyRow> {
  await getApp(db, appId);
  let keyType: string | undefined;
  try {
    keyType = createPublicKey(publicKeyPem).asymmetricKeyType;
  } catch {
    throw problem('invalid', 'The public key is not a PEM-encoded public key.');
  }
  const expected = alg === 'RS256' ? 'rsa' : 'ec';
  if (keyType !== expected)
    throw problem('invalid', `An ${alg} key must be an ${expected.toUpperCase()} key.`);
  return db
    .insertInto('app_keys')
    .values({
      kid: randomBytes(8).toString('hex'),
      app_id: appId,
      alg,
      public_key_pem: publicKeyPem,
      created_at: nowTimestamp(),
      revoked_at: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** Lists an app's keys, revoked ones included. */
export async function listAppKeys(db: Db, appId: string): Promise<AppKeyRow[]> {
  await getApp(db, appId);
  return db.selectFrom('app_keys').selectAll().where('app_id', '=', appId).orderBy('created_at').execute();
}

/** When each of the app's keys last signed a JWT the service verified (keys never used: absent). */
export async function appKeyLastUses(db: Db, appId: string): Promise<Map<string, string>> {
  const rows = await db
    .selectFrom('app_key_uses as u')
    .innerJoin('app_keys as k', 'k.kid', 'u.kid')
    .select(['u.kid', 'u.last_used_at'])
    .where('k.app_id', '=', appId)
    .execute();
  return new Map(rows.map((r) => [r.kid, r.last_used_at]));
}

/** The keys that may verify an app's JWTs now. */
export async function activeAppKeys(db: Db, appId: string): Promise<AppKeyRow[]> {
  return db
    .selectFrom('app_keys')
    .selectAll()
    .where('app_id', '=', appId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Revokes one key; JWTs signed with it are refused from then on. */
export async function revokeAppKey(db: Db, appId: string, kid: string): Promise<void> {
  const result = await db
    .updateTable('app_keys')
    .set({ revoked_at: nowTimestamp() })
    .where('app_id', '=', appId)
    .where('kid', '=', kid)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  if (result.numUpdatedRows === 0n) throw problem('notFound', `App ${appId} has no active key ${kid}.`);
}

/** Finds an app or answers 404. */
export async function getApp(db: Db, appId: string): Promise<AppRow> {
  const row = await db.selectFrom('apps').selectAll().where('id', '=', appId).executeTakeFirst();
  if (row === undefined) throw problem('notFound', `App ${appId} does not exist.`);
  return row;
}

/** Renames an app; returns its name before. */
export async function renameApp(db: Db, appId: string, name: string): Promise<string> {
  const newName = checkedName(name, 'an app name');
  const before = await getApp(db, appId);
  await db.updateTable('apps').set({ name: newName }).where('id', '=', appId).execute();
  return before.name;
}

/** Whether any app exists (`dx serve` suggests onboarding a first one when none does). */
export async function hasApps(db: Db): Promise<boolean> {
  return (await db.selectFrom('apps').select('id').limit(1).executeTakeFirst()) !== undefined;
}

/** Lists every app (operator CLI). */
export async function listApps(db: Db): Promise<AppRow[]> {
  return db.selectFrom('apps').selectAll().orderBy('created_at').execute();
}

/** A page of the apps in name order (then ID), found by name (lists/by-name.ts). */
export async function listAppsByName(
  db: Db,
  query: NamePageQuery,
): Promise<{ rows: AppRow[]; next: NamePosition | null }> {
  return readNamePage(db.selectFrom('apps').selectAll(), { name: 'name', id: 'id' }, query, (a) => ({
    name: a.name,
    id: a.id,
  }));
}
