// One read of the epochs for every request that arrived before it began. A request needs epochs
// read after it arrived: then a revocation committed before it was sent is seen, whichever process
// made it. Requests that arrive together can share such a read, as long as the read begins after
// the last of them arrived. So a request never joins a read already under way (it may have begun
// before the request came); it waits for the next one, which begins once the current one ends.
// Under load one query then serves all the requests of a turn of the event loop on SQLite, and of
// a round trip on PostgreSQL, where a query per request doubled the socket writes of a cached GET.
import { readEpochs, type Epochs } from './credential-cache.js';
import type { Db } from './users.js';

interface NextRead {
  promise: Promise<Epochs>;
  resolve: (epochs: Epochs) => void;
  reject: (err: unknown) => void;
}

export class SharedEpochReads {
  /** The read that the requests arriving now will share; it has not begun. */
  private next: NextRead | null = null;
  private reading = false;

  constructor(private readonly read: () => Promise<Epochs>) {}

  /** Epochs read by a query that begins after this call. */
  epochs(): Promise<Epochs> {
    if (this.next === null) {
      let resolve!: (epochs: Epochs) => void;
      let reject!: (err: unknown) => void;
      const promise = new Promise<Epochs>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      this.next = { promise, resolve, reject };
      // The first caller of a turn waits for its end, so that the requests the same read of the
      // sockets brought in join it; while a read is under way, its end begins the next one.
      if (!this.reading) {
        this.reading = true;
        setImmediate(() => void this.readAll());
      }
    }
    return this.next.promise;
  }

  private async readAll(): Promise<void> {
    while (this.next !== null) {
      const waiting = this.next;
      this.next = null;
      try {
        waiting.resolve(await this.read());
      } catch (err) {
        waiting.reject(err);
      }
    }
    this.reading = false;
  }
}

/** Shared epoch reads of `db`'s change_epochs. */
export function sharedEpochReads(db: Db): SharedEpochReads {
  return new SharedEpochReads(() => readEpochs(db));
}
