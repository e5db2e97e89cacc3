// The progress display of `dx upload`: the file's bytes going up, then the job waiting, then the
// records the worker reads, each with its rate and (when the size is known) the time left; and a
// line when the service stops answering for a while (a restart). On a
// terminal one line is redrawn in place; otherwise (a log, a CI job) plain lines come at a modest
// pace, so the output reads well in a file: no carriage returns, no flood.

/** What the upload and its job have done at one moment; `at` is when (epoch milliseconds). */
export type ProgressState =
  | { phase: 'upload'; bytes: number; total: number; at: number }
  | { phase: 'waiting'; status: string; at: number }
  /** The service does not answer (`reason`); the job is read again for up to `waitMs`. */
  | { phase: 'unavailable'; reason: string; waitMs: number; at: number }
  | { phase: 'load'; rows: number; bytes: number; total: number | null; at: number };

/** Where the display writes; `isTTY` picks redrawn or plain lines. */
export interface ProgressOutput {
  write(text: string): unknown;
  isTTY?: boolean;
}

export interface DisplayOptions {
  /** The clock that paces the output (tests pass their own). */
  now?: () => number;
  /** Plain output: the longest silence while figures change. */
  plainEveryMs?: number;
  /** Terminal: the shortest time between redraws. */
  redrawEveryMs?: number;
}

/** The start of a phase, from which its rates are measured. */
export interface PhaseStart {
  key: string;
  at: number;
  bytes: number;
  rows: number;
}

/** Shows progress states as they come; `end()` once the job is over. */
export class ProgressDisplay {
  private readonly now: () => number;
  private readonly plainEveryMs: number;
  private readonly redrawEveryMs: number;
  private baseline: PhaseStart | null = null;
  private lastLine = '';
  private lastWriteAt = -Infinity;
  private lastDecile = -1;
  private lineOpen = false;

  constructor(
    private readonly out: ProgressOutput,
    options: DisplayOptions = {},
  ) {
    this.now = options.now ?? Date.now;
    this.plainEveryMs = options.plainEveryMs ?? 5000;
    this.redrawEveryMs = options.redrawEveryMs ?? 200;
  }

  /** Shows `state` unless the pace says to wait; `force` shows it at once (a phase's last figures). */
  show(state: ProgressState, force = false): void {
    const key = phaseKey(state);
    let start = this.baseline;
    const newPhase = start?.key !== key;
    if (start === null || newPhase) {
      start = { key, at: state.at, bytes: bytesOf(state), rows: rowsOf(state) };
      this.baseline = start;
    }
    const line = describe(state, start);
    if (line === this.lastLine && !newPhase) return; // nothing new to tell
    const now = this.now();
    if (!force && !newPhase && !this.due(state, now)) return;
    this.write(line, newPhase);
    this.lastLine = line;
    this.lastWriteAt = now;
    this.lastDecile = decileOf(state);
  }

  /** Ends the display: a redrawn line is closed so what follows starts on a line of its own. */
  end(): void {
    if (this.lineOpen) this.out.write('\n');
    this.lineOpen = false;
  }

  /** Terminal: often enough to look live. Plain: every few seconds, or at each tenth of the way. */
  private due(state: ProgressState, now: number): boolean {
    if (this.out.isTTY === true) return now - this.lastWriteAt >= this.redrawEveryMs;
    return now - this.lastWriteAt >= this.plainEveryMs || decileOf(state) > this.lastDecile;
  }

  private write(line: string, newPhase: boolean): void {
    if (this.out.isTTY !== true) {
      this.out.write(`${line}\n`);
      return;
    }
    // A finished phase keeps its last line; the next one is drawn below it.
    if (newPhase && this.lineOpen) this.out.write('\n');
    this.out.write(`\r${line}\x1b[K`);
    this.lineOpen = true;
  }
}

/** The line for one state, its rates measured from the start of its phase. */
export function describe(state: ProgressState, since: PhaseStart): string {
  const seconds = (state.at - since.at) / 1000;
  switch (state.phase) {
    case 'upload': {
      const rate = perSecond(state.bytes - since.bytes, seconds);
      const parts = [`${formatBytes(state.bytes)} of ${formatBytes(state.total)}`];
      if (rate !== null) parts.push(`${formatBytes(rate)}/s`);
      const eta = secondsLeft(state.bytes, state.total, rate);
      if (eta !== null) parts.push(`${formatDuration(eta)} left`);
      return `uploading ${percent(state.bytes, state.total)}% (${parts.join(', ')})`;
    }
    case 'waiting':
      return `waiting for a worker (${state.status})`;
    case 'unavailable':
      return `the service does not answer: ${state.reason}; waiting up to ${formatDuration(state.waitMs / 1000)} for it`;
    case 'load': {
      const rowRate = perSecond(state.rows - since.rows, seconds);
      const byteRate = perSecond(state.bytes - since.bytes, seconds);
      if (state.rows === 0 && state.bytes === 0) return 'loading: starting';
      const parts = [`${counted(state.rows, 'row')} read`];
      if (rowRate !== null) parts.push(`${formatCount(rowRate)} rows/s`);
      if (state.total === null) return `loading: ${parts.join(', ')}`;
      // The file's bytes tell how far along the job is; the time left follows from their rate.
      const eta = secondsLeft(state.bytes, state.total, byteRate);
      if (eta !== null) parts.push(`${formatDuration(eta)} left`);
      return `loading ${percent(state.bytes, state.total)}% (${parts.join(', ')})`;
    }
  }
}

/** A rate per second, or null while too little has happened to tell. */
export function perSecond(amount: number, seconds: number): number | null {
  if (seconds < 0.5 || amount <= 0) return null;
  return amount / seconds;
}

/** Seconds until `done` reaches `total` at `rate`; null when unknown or finished. */
export function secondsLeft(done: number, total: number, rate: number | null): number | null {
  if (rate === null || done >= total) return null;
  return (total - done) / rate;
}

/** Whole percent, 100 only when done (99.6% is not finished). */
export function percent(done: number, total: number): number {
  if (total <= 0 || done >= total) return 100;
  return Math.min(99, Math.floor((done / total) * 100));
}

/** 512 B, 12.3 KiB, 4.5 MiB, 1.20 GiB: 1024-based, as file managers count, and labelled so. */
export function formatBytes(n: number): string {
  if (n < 1024) return `${Math.round(n)} B`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}

/** 1,234,567 (whole numbers). */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

/** `1 record`, `2 records`, `1,234 rows`: a count and its noun, singular for one. */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  const whole = Math.round(n);
  return `${formatCount(whole)} ${whole === 1 ? singular : plural}`;
}

/** 7s, 3m 05s, 2h 04m (rounded up: "0s left" would be a lie). */
export function formatDuration(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h ${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** A job's timestamp (UTC, no zone suffix, as the API writes them) in epoch milliseconds. */
export function parseApiTimestamp(value: string): number {
  return Date.parse(value.endsWith('Z') ? value : `${value}Z`);
}

function phaseKey(state: ProgressState): string {
  return state.phase === 'waiting' ? `waiting:${state.status}` : state.phase;
}

function bytesOf(state: ProgressState): number {
  return state.phase === 'upload' || state.phase === 'load' ? state.bytes : 0;
}

function rowsOf(state: ProgressState): number {
  return state.phase === 'load' ? state.rows : 0;
}

/** Which tenth of the way the state is at (plain output prints a line at each); -1 when unknown. */
function decileOf(state: ProgressState): number {
  if (state.phase === 'waiting' || state.phase === 'unavailable' || state.total === null) return -1;
  return Math.floor(percent(state.bytes, state.total) / 10);
}
