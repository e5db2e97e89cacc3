// Resource use of a child process from /proc (Linux): peak and sampled RSS, CPU time, children.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

function status(pid: number): string {
  return readFileSync(`/proc/${pid}/status`, 'utf8');
}

function kbField(text: string, field: string): number {
  return Number(new RegExp(`${field}:\\s+(\\d+)`).exec(text)?.[1] ?? NaN);
}

/** Resident set size now, in MiB. */
export function rssMb(pid: number): number {
  return kbField(status(pid), 'VmRSS') / 1024;
}

/** Peak resident set size since the process started (VmHWM), in MiB. */
export function peakRssMb(pid: number): number {
  return kbField(status(pid), 'VmHWM') / 1024;
}

/** The fields of /proc/<pid>/stat after the command name: index 0 is field 3 (state). */
function statFields(pid: number | 'self'): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The command name (field 2) may contain spaces; fields after its closing parenthesis are fixed.
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
}

/** User + system CPU time the process has used, in milliseconds. */
export function cpuMs(pid: number): number {
  const fields = statFields(pid);
  const ticks = Number(fields[11]) + Number(fields[12]); // utime, stime
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/**
 * User + system CPU time of this process's children that have ended and been waited for
 * (cutime + cstime, the kernel's child rusage), in milliseconds. The difference across one
 * command's run is that command's CPU, as long as no other child ends meanwhile.
 */
export function endedChildrenCpuMs(): number {
  const fields = statFields('self');
  const ticks = Number(fields[13]) + Number(fields[14]); // cutime, cstime
  return (ticks * 1000) / TICKS_PER_SECOND;
}

/** CPU time of several processes together, in milliseconds. */
export function totalCpuMs(pids: readonly number[]): number {
  return pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
}

/** The direct children of `pid` (nginx's workers, cluster workers). */
export function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return out;
}

/** The 1-minute load average, for the report's conditions line. */
export function loadAverage(): string {
  return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
}

/** Samples the summed VmRSS of `pids` every `everyMs` until stopped; returns the highest, in MiB. */
export function sampleRss(pids: readonly number[], everyMs = 20): () => number {
  let peak = 0;
  const take = () => {
    let sum = 0;
    for (const pid of pids) {
      try {
        sum += rssMb(pid);
      } catch {
        // The process ended (a crash shows where the part waits for it, not in this timer).
      }
    }
    peak = Math.max(peak, sum);
  };
  take();
  const timer = setInterval(take, everyMs);
  return () => {
    clearInterval(timer);
    take();
    return peak;
  };
}

/** Peaks of the summed VmRSS of some processes in the first and the second half of a time span. */
export interface HalvesRss {
  firstMb: number;
  secondMb: number;
}

/**
 * Samples the summed VmRSS of `pids` every `everyMs` until stopped; returns the highest in the
 * first and in the second half of the time sampled, in MiB. Memory that grows with the work
 * done (a buffered answer) peaks later; flat memory peaks alike in both halves.
 */
export function sampleRssHalves(pids: readonly number[], everyMs = 20): () => HalvesRss {
  const samples: [number, number][] = [];
  const started = performance.now();
  const take = () => {
    let sum = 0;
    for (const pid of pids) {
      try {
        sum += rssMb(pid);
      } catch {
        // The process ended.
      }
    }
    samples.push([performance.now() - started, sum]);
  };
  take();
  const timer = setInterval(take, everyMs);
  return () => {
    clearInterval(timer);
    take();
    const mid = (performance.now() - started) / 2;
    const peak = (keep: (t: number) => boolean) =>
      samples.reduce((max, [t, mb]) => (keep(t) ? Math.max(max, mb) : max), 0);
    return { firstMb: peak((t) => t <= mid), secondMb: peak((t) => t > mid) };
  };
}

/**
 * Runs `fn` and returns its result with the highest RSS of `pid` meanwhile, in MiB: VmRSS sampled
 * every `everyMs`, and VmHWM reset first (clear_refs 5) where the kernel lets us, which also
 * catches a spike between two samples.
 */
export async function peakRssWhile<T>(pid: number, fn: () => Promise<T>, everyMs = 50): Promise<[T, number]> {
  let reset = false;
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, '5');
    reset = true;
  } catch {
    // Not our process's owner, or an old kernel: the samples alone.
  }
  const done = sampleRss([pid], everyMs);
  try {
    const value = await fn();
    return [value, Math.max(done(), reset ? peakRssMb(pid) : 0)];
  } finally {
    done();
  }
}
