// What is left after a process is told to stop: its process (or process group) and its port. A
// process whose parent died is reaped by PID 1 whenever it gets to it: until then it is a zombie,
// which has exited and counts here as gone.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';

/** A loopback port that is free now (for a service that must come back on the same port). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Whether 127.0.0.1:`port` refuses connections (nothing listens there). */
export function portRefuses(port: number): Promise<boolean> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ECONNREFUSED') resolve(true);
      else reject(err);
    });
  });
}

/** `/proc/<pid>/stat`'s state and process group, or null when there is no such process. */
function procStat(pid: number): { state: string; group: number } | null {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return null;
  }
  // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so read after the last ')'.
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return { state: fields[0] ?? '', group: Number(fields[2]) };
}

const HAS_PROC = existsSync('/proc/self/stat');

/** Whether the process runs (a zombie has exited and does not). */
export function running(pid: number): boolean {
  if (!HAS_PROC) return signalReaches(pid);
  const stat = procStat(pid);
  return stat !== null && stat.state !== 'Z';
}

/** The processes of group `group` that still run. */
export function groupMembers(group: number): number[] {
  if (!HAS_PROC) return signalReaches(-group) ? [group] : [];
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      const stat = procStat(pid);
      return stat !== null && stat.group === group && stat.state !== 'Z';
    });
}

/** The process's command name (`/proc/<pid>/comm`), or '' where that cannot be read. */
export function processName(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/comm`, 'utf8').trim();
  } catch {
    return '';
  }
}

function signalReaches(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Polls `check` every 50 ms until it holds or `timeoutMs` passed; returns whether it held. */
export async function within(timeoutMs: number, check: () => boolean | Promise<boolean>): Promise<boolean> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return true;
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 50));
  }
}
