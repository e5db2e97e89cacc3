// One JSON record (an object) to typed cells in schema order; shared by JSON arrays and NDJSON.
import { COLUMN_TYPES, describeBadJson } from '../datasets/column-types.js';
import type { CellValue, JsonConverter } from './cells.js';
import type { LoadContext } from './context.js';
import { textDefect } from './text.js';

/** Property lookup and converters for JSON records, computed once per parse. */
export class JsonShape {
  private readonly index = new Map<string, number>();
  private readonly converters: JsonConverter[];
  /** Set by the reader while the text at hand may hold NUL characters or invalid bytes
   * (suspectJsonText): then every string is checked, otherwise none is. */
  check = false;

  constructor(private readonly ctx: LoadContext) {
    ctx.names.forEach((name, i) => this.index.set(name, i));
    this.converters = ctx.types.map((type) => COLUMN_TYPES[type].fromJson);
  }

  /** Parses one record's JSON text and hands it to {@link JsonShape.take}; a syntax error is a row error. */
  takeText(text: string, line: number): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (e) {
      this.ctx.stats.rowsRead++;
      const bytes = !this.check
        ? ''
        : text.includes('\0')
          ? ' (it has a NUL character)'
          : !text.isWellFormed()
            ? ' (it has bytes that are not valid UTF-8)'
            : '';
      this.ctx.error(line, `invalid JSON${bytes}: ${e instanceof Error ? e.message : String(e)}`);
      return;
    }
    this.take(value, line);
  }

  /** Checks one parsed record; a valid one joins the batch, each defect becomes an error. */
  take(value: unknown, line: number): void {
    const { ctx } = this;
    ctx.stats.rowsRead++;
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      ctx.error(line, 'expected a JSON object');
      return;
    }
    const record = value as Record<string, unknown>;
    // A missing key means null, hence the nulls to start with.
    const cells = new Array<CellValue>(ctx.names.length).fill(null);
    let ok = true;
    for (const key in record) {
      const p = this.index.get(key);
      if (p === undefined) {
        ok = false;
        const defect = this.check ? textDefect(key) : undefined;
        ctx.error(line, `key "${key}" ${ctx.notAField}${defect ? ` (${defect})` : ''}`, key);
        continue;
      }
      const v = record[key];
      if (v === null) continue;
      const defect = this.check && typeof v === 'string' ? textDefect(v) : undefined;
      if (defect !== undefined) {
        ok = false;
        ctx.error(line, defect, key);
        continue;
      }
      const cell = (this.converters[p] as JsonConverter)(v);
      if (cell === undefined) {
        ok = false;
        ctx.error(line, describeBadJson(ctx.types[p] ?? 'string', v), key);
      } else cells[p] = cell;
    }
    for (let p = 0; p < cells.length; p++) {
      if (cells[p] !== null || !ctx.required[p]) continue;
      const name = ctx.names[p] ?? '';
      // A present but badly typed value has its own error already.
      if (Object.hasOwn(record, name) && record[name] !== null) continue;
      ok = false;
      ctx.error(line, 'a value is required', name);
    }
    if (ok) ctx.accept(cells, line);
  }
}
