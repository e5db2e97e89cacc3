// A minimal JSON-lines logger for processes that run the worker without the API (no Fastify logger).
import type { WorkerLog } from './deps.js';

/** Writes one JSON line per event to stderr; errors keep only their message. */
export function consoleLog(level: string): WorkerLog {
  const quiet = level === 'silent' || level === 'fatal';
  const write = (lvl: string, obj: object, msg: string) => {
    if (quiet) return;
    const fields = Object.fromEntries(
      Object.entries(obj).map(([k, v]) => [k, v instanceof Error ? { message: v.message, name: v.name } : v]),
    );
    process.stderr.write(
      `${JSON.stringify({ level: lvl, time: Date.now(), role: 'worker', ...fields, msg })}\n`,
    );
  };
  return {
    info: (obj, msg) => write('info', obj, msg),
    warn: (obj, msg) => write('warn', obj, msg),
    error: (obj, msg) => write('error', obj, msg),
  };
}
