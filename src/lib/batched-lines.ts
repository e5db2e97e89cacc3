// Log lines written in batches: formatted here exactly as pino would write them (level, time, the
// logger's bindings, the fields, msg) and handed to the logger's destination 256 lines at a time or
// at least every 100 ms. pino's generic serialiser and a write per line cost more than much of a
// small request's own work (docs/benchmarks.md); the proxy's and the API's access lines go this way.
import { pino, type DestinationStream } from 'pino';
import { takesManyLinesPerWrite, type Logger } from './logger.js';

/** A batchable destination gets lines in batches of this many, or at least this often. */
const BATCH_LINES = 256;
const BATCH_MS = 100;

type Internals = Record<symbol, unknown>;

/** One entry's line, from the fields pino would put before the entry's own: `head` is
 * `{"level":30,"time":<ms>` followed by the logger's bindings (`,"pid":…,"role":…`). */
export type LineFormat<E> = (entry: E, head: string) => string;

/**
 * Info lines of one logger, batched when its destination takes many lines per write (those
 * `createLogger` makes). A batch's lines are formatted together when it is written, not each amid
 * its request: the same instructions run in one loop while their code and data stay in cache.
 */
export class BatchedLines<E> {
  /** Whether the logger writes info lines at all. */
  readonly enabled: boolean;
  /** Whether `write` batches; when not, the caller logs through pino (tests' own destinations). */
  readonly batching: boolean;
  private readonly stream: DestinationStream | null;
  private readonly level: string;
  private readonly bindings: string;
  /** Entries not yet written, and the `Date.now()` each was logged at. */
  private entries: E[] = [];
  private times: number[] = [];
  /** `Date.now()` of the last line and its head: consecutive lines mostly share a millisecond. */
  private lastTime = 0;
  private lastHead = '';
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly logger: Logger,
    private readonly format: LineFormat<E>,
  ) {
    this.enabled = logger.isLevelEnabled('info');
    const internals = logger as unknown as Internals;
    const stream = internals[pino.symbols.streamSym] as (DestinationStream & Internals) | undefined;
    const plain = stream !== undefined && stream[pino.symbols.needsMetadataGsym] !== true;
    this.stream = plain ? stream : null;
    this.batching = this.enabled && plain && takesManyLinesPerWrite(stream);
    this.level = `{"level":${logger.levels.values.info},"time":`;
    const bindings = internals[pino.symbols.chindingsSym];
    this.bindings = typeof bindings === 'string' ? bindings : '';
  }

  /** Whether lines go straight to the destination, formatted here (batched or one by one). */
  get formatsHere(): boolean {
    return this.stream !== null;
  }

  /** Writes one entry's line: in the next batch when batching, else at once. Only when `formatsHere`. */
  write(entry: E): void {
    if (!this.batching) {
      this.stream?.write(this.format(entry, this.headAt(Date.now())));
      return;
    }
    this.entries.push(entry);
    this.times.push(Date.now());
    if (this.entries.length >= BATCH_LINES) this.drain();
    else if (this.timer === null) {
      this.timer = setTimeout(this.drain, BATCH_MS);
      // Pending lines alone must not keep the process up; flush() writes them.
      this.timer.unref();
    }
  }

  /** Writes buffered lines and waits for the destination to take them (before exit). */
  flush(): Promise<void> {
    this.drain();
    return new Promise((resolve) => this.logger.flush(() => resolve()));
  }

  private readonly drain = (): void => {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    const { entries, times } = this;
    if (entries.length === 0 || this.stream === null) return;
    this.entries = [];
    this.times = [];
    // A rope of the lines, flattened once by the stream's first pass over it (an array joined
    // instead cost more: measured with callgrind).
    let text = '';
    for (let i = 0; i < entries.length; i++)
      text += this.format(entries[i] as E, this.headAt(times[i] as number));
    this.stream.write(text);
  };

  private headAt(time: number): string {
    if (time !== this.lastTime) {
      this.lastTime = time;
      this.lastHead = `${this.level}${time}${this.bindings}`;
    }
    return this.lastHead;
  }
}

/**
 * `JSON.stringify(s)` for a string: printable ASCII other than `"` and `\` is written between
 * quotes as it is (JSON.stringify would not change it either); anything else goes through
 * JSON.stringify. A request's values are nearly always plain, and the scan costs less than the call.
 */
export function jsonString(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return `"${s}"`;
}
