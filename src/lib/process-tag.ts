// Names that say which process made them (this host, this pid, this start), so a process that
// finds one left by a process that died (kill -9, a crash) can take over at once instead of
// waiting for a timeout: an upload's claim, a put's temporary file.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';

// Host names hold no '_' (RFC 1123); any that does is cut to what comes before it.
const HOST = hostname().split('_')[0] ?? 'host';
/** Tells this start of the process from an earlier one that had the same pid. */
const START = randomUUID().slice(0, 8);

/** A fresh name tagged with this process: `host_pid_start_uuid`. */
export function taggedName(): string {
  return `${HOST}_${process.pid}_${START}_${randomUUID()}`;
}

/** True when `name` was made by a process of this host that is gone (never for other hosts, whose
 * processes cannot be seen from here, nor for names made otherwise). */
export function madeByGoneProcess(name: string): boolean {
  const parts = name.split('_');
  if (parts.length !== 4) return false;
  const [host, pidText, start] = parts;
  const pid = Number(pidText);
  if (host !== HOST || !Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return start !== START; // this pid, an earlier start: gone
  try {
    process.kill(pid, 0); // signal 0 only asks whether the process exists
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
