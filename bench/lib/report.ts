// The report: markdown sections from each part, printed and written to BENCHMARKS.md.
import { writeFileSync } from 'node:fs';
import { cpus, totalmem } from 'node:os';
import { loadAverage } from './procfs.js';

/** One part's contribution to the report. */
export interface Section {
  title: string;
  /** Markdown paragraphs and tables, in order. */
  blocks: string[];
}

const NUMERIC = /^[-–+0-9.,×% ]*(ms)?$/;

/** A markdown table; columns holding only numbers are right-aligned. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const align = header.map((_, i) => (rows.every((r) => NUMERIC.test(r[i] ?? '')) ? '---:' : '---'));
  const line = (cells: readonly string[]) => `| ${cells.join(' | ')} |`;
  return [line(header), line(align), ...rows.map(line)].join('\n');
}

/** What the run happened on, so figures are read against their conditions. */
export interface Conditions {
  startedAt: Date;
  loadBefore: string;
  loadAfter: string;
  secondsPerPoint: number;
  runsPerPoint: number;
  loadTool: string;
}

/** The whole report as markdown. */
export function renderReport(conditions: Conditions, sections: readonly Section[]): string {
  const cpu = cpus();
  const head = [
    '# Benchmarks',
    '',
    'Written by `npm run bench` (see [docs/benchmarks.md](docs/benchmarks.md)); every figure of a table ' +
      'was measured in the same run on the same machine, as the median of ' +
      `${conditions.runsPerPoint} runs of ${conditions.secondsPerPoint} s after a warm-up.`,
    '',
    table(
      ['condition', 'value'],
      [
        ['date', conditions.startedAt.toISOString().replace(/\.\d+Z$/, 'Z')],
        ['node', process.version],
        ['CPU', `${cpu.length} × ${cpu[0]?.model.trim() ?? '?'}`],
        ['memory', `${Math.round(totalmem() / 2 ** 30)} GiB`],
        ['load average (1/5/15 min) before → after', `${conditions.loadBefore} → ${conditions.loadAfter}`],
        ['load generator', conditions.loadTool],
      ],
    ),
  ];
  const body = sections.flatMap((s) => ['', `## ${s.title}`, ...s.blocks.flatMap((b) => ['', b])]);
  return [...head, ...body, ''].join('\n');
}

/** Prints the report and writes it to `file`. */
export function writeReport(
  file: string,
  conditions: Omit<Conditions, 'loadAfter'>,
  sections: readonly Section[],
): void {
  const text = renderReport({ ...conditions, loadAfter: loadAverage() }, sections);
  process.stdout.write(`\n${text}`);
  writeFileSync(file, text);
  console.error(`\nwritten to ${file}`);
}
