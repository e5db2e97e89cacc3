// Per-installation access tokens: opaque random bearer tokens, stored as SHA-256 hashes, checked
// against the installation, the workspace key version and the app key that minted them on every
// call, so revocation (of the installation, the workspace key or the app key) is immediate.
import { sql } from 'kysely';
import { problem } from '../../errors.js';
import { hashSecret, randomSecret } from '../../lib/secrets.js';
import { formatSeconds, nowSeconds, nowTimestamp } from '../../lib/time.js';
import type { Db } from './users.js';
import { asWorkspaceType, workspaceKeyMatches, type WorkspaceType } from './workspaces.js';
import type { CredentialCache, UnderEpoch } from './credential-cache.js';
import type { Database } from '../../storage/db/database.js';
import { GroupInsert } from '../../storage/db/group-insert.js';
import type { AccessTokensTable } from '../../storage/db/tables.js';

export const PERMISSIONS = ['datasets:read', 'datasets:write'] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ACCESS_TOKEN_PREFIX = 'dxt_';
/** Hex digits of the mint time in milliseconds that follow the prefix (enough until the year 10889). */
const MINT_TIME_DIGITS = 12;
/** The length of a token that carries its mint time: prefix, time, 32 random bytes in base64url. */
const TIMED_TOKEN_LENGTH = ACCESS_TOKEN_PREFIX.length + MINT_TIME_DIGITS + 43;

/** A new access token: the prefix, the mint time, then 32 random bytes (the secret). */
function newAccessToken(nowMs = Date.now()): string {
  return randomSecret(ACCESS_TOKEN_PREFIX + nowMs.toString(16).padStart(MINT_TIME_DIGITS, '0'));
}

/**
 * The key an access token is stored and found under: its SHA-256, led by its mint time when it
 * carries one (tokens minted by earlier versions do not, and keep their plain hash). Keys that
 * grow with time land at the end of the key's index: a plain hash put every new row on a random
 * page of it, a page written per token minted.
 */
export function accessTokenKey(token: string): string {
  const hash = hashSecret(token);
  if (token.length !== TIMED_TOKEN_LENGTH) return hash;
  const time = token.slice(ACCESS_TOKEN_PREFIX.length, ACCESS_TOKEN_PREFIX.length + MINT_TIME_DIGITS);
  return /^[0-9a-f]+$/.test(time) ? time + hash : hash;
}

/** The answer of POST /auth/clientToken. */
export interface IssuedToken {
  tokenType: 'Bearer';
  expiresAt: string;
  token: string;
}

/** Who an access token speaks for. */
export interface InstallationPrincipal {
  appId: string;
  appName: string;
  installationId: number;
  workspaceId: number;
  workspaceName: string;
  workspaceType: WorkspaceType;
  ownerUserId: number;
  ownerName: string;
  ownerEmail: string;
  permissions: Permission[];
  /** Epoch seconds at which the token stops working. */
  expiresAt: number;
  /** The app key whose JWT minted the token (or its parent); revoking that key stops it. */
  appKeyKid: string | null;
}

export interface MintRequest {
  appId: string;
  /** The app key whose JWT asks (null: the operator); a nested token inherits `within`'s. */
  appKeyKid: string | null;
  installationId: number;
  workspaceKey: string;
  /** Empty means all (of `within`'s, when set). */
  permissions: string[];
  ttlSeconds: number;
  /**
   * Set when an access token asks for a token of its own installation (a DXAPI client opening a
   * nested context): the new token is never wider than the calling one, in rights or in time.
   */
  within?: InstallationPrincipal;
}

/** What minting keeps per process: the rows it writes, and what installations resolved to. */
export interface TokenMinting {
  /** Token rows, committed together with those of concurrent mints (group-insert.ts). */
  rows: GroupInsert<AccessTokensTable>;
  /** An installation's app and workspace key, reused while the identity epoch holds (a key
   * rotation or an uninstall bumps it). */
  installations: CredentialCache<InstallationKey>;
}

/** What a mint checks of an installation: its app, and its workspace's key. */
interface InstallationKey {
  id: number;
  app_id: string;
  key_hash: string;
  key_version: number;
}

/** A process's minting state over `database`. */
export function tokenMinting(
  database: Pick<Database, 'db' | 'run'>,
  installations: CredentialCache<InstallationKey>,
): TokenMinting {
  return { rows: new GroupInsert(tokenRowsWriter(database)), installations };
}

/** The columns of a token row, in the order its INSERT lists them. */
const TOKEN_COLUMNS = [
  'token_hash',
  'installation_id',
  'key_version',
  'permissions',
  'expires_at',
  'created_at',
  'app_key_kid',
] as const satisfies readonly (keyof AccessTokensTable)[];
/** Fails to compile while a column of the table is missing from TOKEN_COLUMNS. */
const everyTokenColumn: [Exclude<keyof AccessTokensTable, (typeof TOKEN_COLUMNS)[number]>] extends [never]
  ? true
  : never = true;
void everyTokenColumn;

/** Groups of at most this many rows are inserted by statements PostgreSQL keeps prepared (one per
 * row count and connection); larger ones, rare, are planned each time. */
const PREPARED_MAX_ROWS = 64;

/**
 * Inserts token rows with one statement whose SQL Kysely compiles once per row count (in the
 * dialect of `db`): building a many-row INSERT anew for each group cost ~8 µs of CPU per mint
 * (docs/benchmarks.md). PostgreSQL keeps the statements of the usual group sizes prepared.
 */
function tokenRowsWriter({
  db,
  run,
}: Pick<Database, 'db' | 'run'>): (rows: AccessTokensTable[]) => Promise<void> {
  const sqlByCount = new Map<number, string>();
  return async (rows) => {
    let text = sqlByCount.get(rows.length);
    if (text === undefined) {
      // Compiled from rows of TOKEN_COLUMNS' order, the order the parameters below follow.
      const ordered = rows.map((row) => Object.fromEntries(TOKEN_COLUMNS.map((c) => [c, row[c]])));
      text = db
        .insertInto('access_tokens')
        .values(ordered as unknown as AccessTokensTable[])
        .compile().sql;
      sqlByCount.set(rows.length, text);
    }
    const parameters: unknown[] = [];
    for (const row of rows) for (const column of TOKEN_COLUMNS) parameters.push(row[column]);
    await run(
      text,
      parameters,
      rows.length <= PREPARED_MAX_ROWS ? `dx_token_rows_${rows.length}` : undefined,
    );
  };
}

/**
 * Mints an access token for one of the app's installations, given its workspace's key; `minting`'s
 * epoch is the identity epoch read before this call.
 */
export async function mintAccessToken(
  db: Db,
  req: MintRequest,
  minting: UnderEpoch<TokenMinting>,
): Promise<IssuedToken> {
  const row = await installationKey(db, req.installationId, minting);
  // The real service answers 400 for an installation that is not the app's (or none): no existence leak.
  if (row === null || row.app_id !== req.appId) {
    throw problem('invalid', `Installation ${req.installationId} is not an installation of this app.`, {
      errors: { installationId: ['not an installation of this app'] },
    });
  }
  if (req.within !== undefined && req.within.installationId !== row.id) {
    throw problem(
      'forbidden',
      `An access token opens contexts of its own installation (${req.within.installationId}) only; ` +
        "use the app's JWT for another installation.",
    );
  }
  if (!workspaceKeyMatches(row, req.workspaceKey)) {
    throw problem('forbidden', "The Workspace Key does not match the installation's workspace.", {
      code: 'workspace_key_mismatch',
    });
  }
  const permissions = narrowPermissions(req.permissions, req.within?.permissions ?? PERMISSIONS);
  const now = nowSeconds();
  const token = newAccessToken();
  const expiresAt = Math.min(now + req.ttlSeconds, req.within?.expiresAt ?? Infinity);
  await minting.cache.rows.insert({
    token_hash: accessTokenKey(token),
    installation_id: row.id,
    key_version: row.key_version,
    permissions: permissions.join(' '),
    expires_at: expiresAt,
    created_at: nowTimestamp(),
    app_key_kid: req.within !== undefined ? req.within.appKeyKid : req.appKeyKid,
  });
  await sweepExpiredTokens(db, now);
  return { tokenType: 'Bearer', expiresAt: formatSeconds(expiresAt), token };
}

/** The installation's app and workspace key; null when there is no such installation (not kept). */
async function installationKey(
  db: Db,
  installationId: number,
  { cache, epoch }: UnderEpoch<TokenMinting>,
): Promise<InstallationKey | null> {
  const key = String(installationId);
  const kept = cache.installations.get(key, epoch);
  if (kept !== undefined) return kept;
  const row = await db
    .selectFrom('installations as i')
    .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .select(['i.id', 'i.app_id', 'w.key_hash', 'w.key_version'])
    .where('i.id', '=', installationId)
    .executeTakeFirst();
  if (row === undefined) return null;
  cache.installations.set(key, epoch, row);
  return row;
}

let lastSweep = 0;

/**
 * Expired tokens are useless; sweeping them as tokens are minted keeps the table small without a
 * timer. Once a minute per process at most: each sweep that deletes bumps the identity epoch.
 */
async function sweepExpiredTokens(db: Db, now: number): Promise<void> {
  if (now - lastSweep < 60) return;
  lastSweep = now;
  await db
    .deleteFrom('access_tokens')
    .where('expires_at', '<', now - 3600)
    .execute();
}

/** The requested permissions, all of `allowed` when none are named; never more than `allowed`. */
function narrowPermissions(requested: string[], allowed: readonly Permission[]): Permission[] {
  if (requested.length === 0) return [...allowed];
  const unknown = requested.filter((p) => !(PERMISSIONS as readonly string[]).includes(p));
  if (unknown.length > 0) {
    throw problem('invalid', 'Unknown permissions requested.', {
      errors: {
        permissions: unknown.map((p) => `unknown permission "${p}" (use ${PERMISSIONS.join(', ')})`),
      },
    });
  }
  const wider = requested.filter((p) => !(allowed as readonly string[]).includes(p));
  if (wider.length > 0) {
    throw problem('forbidden', `The calling token lacks ${wider.join(', ')}; a new token cannot add it.`, {
      code: 'permission_missing',
    });
  }
  return [...new Set(requested as Permission[])];
}

/** Access tokens resolved under an identity epoch (hashed token → its row). */
export type AccessTokenCache = CredentialCache<AccessTokenRow>;

/**
 * Resolves an access token to its installation; 401 when unknown, expired or revoked. With `cached`,
 * what the token resolved to under the identity epoch read before this call is reused
 * (credential-cache.ts).
 */
export async function authenticateAccessToken(
  db: Db,
  token: string,
  cached?: UnderEpoch<AccessTokenCache>,
): Promise<InstallationPrincipal> {
  const hash = accessTokenKey(token);
  let row: AccessTokenRow | null | undefined;
  if (cached !== undefined) {
    // The epoch was read before resolving: a change after that read bumps it past the one kept.
    const { cache, epoch } = cached;
    row = cache.get(hash, epoch);
    if (row === undefined) {
      row = await accessTokenRow(db, hash);
      // Unknown tokens are not kept: a stranger's guesses would only push real ones out.
      if (row !== null) cache.set(hash, epoch, row);
    }
  } else {
    row = await accessTokenRow(db, hash);
  }
  if (row === null)
    throw problem('unauthenticated', 'The access token is unknown or has been revoked.', {
      code: 'access_token_invalid',
    });
  if (row.expires_at <= nowSeconds())
    throw problem('unauthenticated', 'The access token has expired.', { code: 'access_token_expired' });
  if (row.key_version !== row.current_key_version) {
    throw problem('unauthenticated', 'The workspace key was rotated; mint a new access token.', {
      code: 'access_token_invalid',
    });
  }
  if (row.app_key_kid !== null && (row.minting_kid === null || row.minting_key_revoked_at !== null)) {
    throw problem(
      'unauthenticated',
      'The app key that minted this access token has been revoked; mint a new one with an active key.',
      { code: 'access_token_invalid' },
    );
  }
  return {
    appId: row.app_id,
    appName: row.app_name,
    installationId: row.installation_id,
    workspaceId: row.workspace_id,
    workspaceName: row.workspace_name,
    workspaceType: asWorkspaceType(row.workspace_type),
    ownerUserId: row.owner_id,
    ownerName: row.owner_name,
    ownerEmail: row.owner_email,
    permissions: row.permissions.split(' ').filter((p): p is Permission => p !== ''),
    expiresAt: Number(row.expires_at),
    appKeyKid: row.app_key_kid,
  };
}

/** What an access token resolves to: the token, its installation, workspace, app, owner and key. */
async function accessTokenRow(db: Db, tokenHash: string) {
  const row = await db
    .selectFrom('access_tokens as t')
    .innerJoin('installations as i', 'i.id', 't.installation_id')
    .innerJoin('workspaces as w', 'w.id', 'i.workspace_id')
    .innerJoin('apps as a', 'a.id', 'i.app_id')
    .innerJoin('users as u', 'u.id', 'w.owner_user_id')
    .leftJoin('app_keys as k', 'k.kid', 't.app_key_kid')
    .select([
      't.app_key_kid',
      'k.kid as minting_kid',
      'k.revoked_at as minting_key_revoked_at',
      't.expires_at',
      't.permissions',
      't.key_version',
      sql<number>`w.key_version`.as('current_key_version'),
      'i.id as installation_id',
      'a.id as app_id',
      'a.name as app_name',
      'w.id as workspace_id',
      'w.display_name as workspace_name',
      'w.type as workspace_type',
      'u.id as owner_id',
      'u.display_name as owner_name',
      'u.email as owner_email',
    ])
    .where('t.token_hash', '=', tokenHash)
    .executeTakeFirst();
  return row ?? null;
}

type AccessTokenRow = NonNullable<Awaited<ReturnType<typeof accessTokenRow>>>;
