// What credentials resolved to, kept per process and reused while the identity epoch is unchanged.
// The epoch (migration 014) is bumped by the database itself, in the same transaction, on every
// update or delete of tokens, installations, workspaces, apps, users and app keys: a revocation, a
// key rotation or an uninstall reaches every process on its next request. Each use still reads the
// epoch (one primary-key lookup) and checks the times of the credential against the clock.
import type { Db } from './users.js';

/** The current identity epoch. */
export async function identityEpoch(db: Db): Promise<number> {
  const row = await db
    .selectFrom('change_epochs')
    .select('epoch')
    .where('name', '=', 'identity')
    .executeTakeFirstOrThrow();
  return Number(row.epoch);
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
