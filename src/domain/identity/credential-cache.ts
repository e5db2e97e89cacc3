// What credentials resolved to, kept per process and reused while the identity epoch is unchanged.
// The epoch (migration 014) is bumped by the database itself, in the same transaction, on every
// update or delete of tokens, installations, workspaces, apps, users and app keys: a revocation, a
// key rotation or an uninstall reaches every process on its next request. Each use still reads the
// epoch (one primary-key lookup) and checks the times of the credential against the clock.
import type { Db } from './users.js';

/** The counters of change_epochs: `identity` (migration 014) and `data` (migration 015). */
export interface Epochs {
  identity: number;
  data: number;
}

/** Both epochs, in one query: read once per request, before anything they vouch for. */
export async function readEpochs(db: Db): Promise<Epochs> {
  const rows = await db.selectFrom('change_epochs').select(['name', 'epoch']).execute();
  const epochOf = (name: keyof Epochs) => {
    const row = rows.find((r) => r.name === name);
    if (row === undefined) throw new Error(`change_epochs has no ${name} row: the database is not migrated`);
    return Number(row.epoch);
  };
  return { identity: epochOf('identity'), data: epochOf('data') };
}

/** A cache and the identity epoch read for this use of it. */
export interface UnderEpoch<C> {
  cache: C;
  epoch: number;
}

/** How many credentials one cache keeps (the least recently used go first). */
const CAPACITY = 10_000;

/** Values resolved from credentials (keyed by a hash of the credential), each with its epoch. */
export class CredentialCache<V> {
  private readonly entries = new Map<string, { epoch: number; value: V }>();

  /** The value resolved under `epoch`, or undefined (never seen, evicted, or resolved earlier). */
  get(key: string, epoch: number): V | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.epoch !== epoch) {
      this.entries.delete(key);
      return undefined;
    }
    // Map order is the LRU order: a hit moves to the end.
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry.value;
  }

  /** Keeps what `key` resolved to under `epoch` (read before resolving it). */
  set(key: string, epoch: number, value: V): void {
    this.entries.delete(key);
    if (this.entries.size >= CAPACITY) {
      const oldest = this.entries.keys().next();
      if (oldest.done !== true) this.entries.delete(oldest.value);
    }
    this.entries.set(key, { epoch, value });
  }
}
