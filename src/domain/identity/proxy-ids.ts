// Proxy IDs (the X-PROXYVID values): created at onboarding, shown once, stored only as a hash.
// One home for the CLI (`dx proxy-ids`), the console and the proxy's request check.
import { hash, randomBytes } from 'node:crypto';
import { checkedName } from './names.js';
import type { Kysely } from 'kysely';
import { problem } from '../../errors.js';
import type { ProxyIdRow, Tables } from '../../storage/db/tables.js';

/** Every proxy ID starts with this, so a leaked one is easy to recognise in code or logs. */
export const PROXY_ID_MARK = 'pv_';
/** Random characters of the ID kept in clear as its name in lists, logs and metrics (48 bits). */
const PREFIX_RANDOM_CHARS = 8;
/** The shape of every ID this store issues: the mark and 32 base64url characters (192 bits). */
const PROXY_ID_SHAPE = /^pv_[A-Za-z0-9_-]{32}$/;

/** A proxy ID as listed: everything but the secret itself. */
export interface ProxyIdInfo {
  /** The ID's first characters, e.g. `pv_AbC4eF9h`; identifies it without granting access. */
  prefix: string;
  name: string;
  createdAt: string;
  revokedAt: string | null;
}

/** An active proxy ID as the request check needs it. */
export interface ActiveProxyId {
  /** Hex sha256 of the full ID. */
  hash: string;
  prefix: string;
}

/** Onboarding and lookup of proxy IDs. */
export interface ProxyIdStore {
  /** Creates an ID for `name`; the returned `id` is the only time the secret is ever seen. */
  create(name: string): Promise<{ id: string; info: ProxyIdInfo }>;
  /** Every ID, oldest first; revoked ones too unless `activeOnly`. */
  list(options?: { activeOnly?: boolean }): Promise<ProxyIdInfo[]>;
  /** Revokes by full ID or by prefix; throws a 404 problem when none matches. Idempotent. */
  revoke(idOrPrefix: string): Promise<ProxyIdInfo>;
  /** The hashes of all active IDs, for the in-memory check. */
  active(): Promise<ActiveProxyId[]>;
  /** Records that the ID of `prefix` was used now (the proxy admitted a request with it). */
  recordUse(prefix: string): Promise<void>;
  /** When each ID was last used, by prefix (IDs never used are absent). */
  lastUses(): Promise<Map<string, string>>;
}

/** True when `value` has the shape of an issued ID (cheap pre-check before hashing). */
export function looksLikeProxyId(value: string): boolean {
  return PROXY_ID_SHAPE.test(value);
}

/** The hash under which an ID is stored and looked up. */
export function hashProxyId(id: string): string {
  return hash('sha256', id, 'hex');
}

/** The non-secret prefix of an ID. */
export function proxyIdPrefix(id: string): string {
  return id.slice(0, PROXY_ID_MARK.length + PREFIX_RANDOM_CHARS);
}

/** The store on the metadata database (SQLite or PostgreSQL, through Kysely). */
export class SqlProxyIdStore implements ProxyIdStore {
  constructor(
    private readonly db: Kysely<Tables>,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async create(name: string): Promise<{ id: string; info: ProxyIdInfo }> {
    const trimmed = checkedName(name, 'who the proxy ID is for');
    // A prefix collision (1 in 2^48 per pair) is retried rather than allowed to fail onboarding.
    for (let attempt = 0; ; attempt++) {
      const id = PROXY_ID_MARK + randomBytes(24).toString('base64url');
      const row: ProxyIdRow = {
        prefix: proxyIdPrefix(id),
        id_hash: hashProxyId(id),
        name: trimmed,
        created_at: timestamp(this.now()),
        revoked_at: null,
      };
      const exists = await this.db
        .selectFrom('proxy_ids')
        .select('prefix')
        .where('prefix', '=', row.prefix)
        .executeTakeFirst();
      if (exists !== undefined && attempt < 5) continue;
      await this.db.insertInto('proxy_ids').values(row).execute();
      return { id, info: toInfo(row) };
    }
  }

  async list(options: { activeOnly?: boolean } = {}): Promise<ProxyIdInfo[]> {
    let query = this.db.selectFrom('proxy_ids').selectAll().orderBy('created_at').orderBy('prefix');
    if (options.activeOnly === true) query = query.where('revoked_at', 'is', null);
    return (await query.execute()).map(toInfo);
  }

  async revoke(idOrPrefix: string): Promise<ProxyIdInfo> {
    const value = idOrPrefix.trim();
    const row = await this.db
      .selectFrom('proxy_ids')
      .selectAll()
      .where((eb) =>
        looksLikeProxyId(value) ? eb('id_hash', '=', hashProxyId(value)) : eb('prefix', '=', value),
      )
      .executeTakeFirst();
    if (row === undefined) throw problem('notFound', 'No proxy ID matches that ID or prefix.');
    if (row.revoked_at !== null) return toInfo(row);
    const revokedAt = timestamp(this.now());
    await this.db
      .updateTable('proxy_ids')
      .set({ revoked_at: revokedAt })
      .where('prefix', '=', row.prefix)
      .where('revoked_at', 'is', null)
      .execute();
    return toInfo({ ...row, revoked_at: revokedAt });
  }

  async active(): Promise<ActiveProxyId[]> {
    const rows = await this.db
      .selectFrom('proxy_ids')
      .select(['id_hash', 'prefix'])
      .where('revoked_at', 'is', null)
      .execute();
    return rows.map((r) => ({ hash: r.id_hash, prefix: r.prefix }));
  }

  async recordUse(prefix: string): Promise<void> {
    const at = timestamp(this.now());
    await this.db
      .insertInto('proxy_id_uses')
      .values({ prefix, last_used_at: at })
      .onConflict((oc) => oc.column('prefix').doUpdateSet({ last_used_at: at }))
      .execute();
  }

  async lastUses(): Promise<Map<string, string>> {
    const rows = await this.db.selectFrom('proxy_id_uses').select(['prefix', 'last_used_at']).execute();
    return new Map(rows.map((r) => [r.prefix, r.last_used_at]));
  }
}

function toInfo(row: ProxyIdRow): ProxyIdInfo {
  return { prefix: row.prefix, name: row.name, createdAt: row.created_at, revokedAt: row.revoked_at };
}

/** ISO 8601 UTC without zone suffix, microseconds: the timestamp format of every table. */
function timestamp(d: Date): string {
  return `${d.toISOString().slice(0, -1)}000`;
}
