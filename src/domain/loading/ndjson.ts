// Streaming reader of newline-delimited JSON: one object per line, blank lines skipped.
import { MAX_RECORD_CHARS, type LoadContext, type ParsedBatch } from './context.js';
import { JsonShape } from './json-record.js';

/** Reads newline-delimited JSON objects into typed rows; errors name the physical line. */
export async function* readNdjson(
  chunks: AsyncIterable<string>,
  ctx: LoadContext,
): AsyncGenerator<ParsedBatch> {
  const shape = new JsonShape(ctx);
  let text = '';
  let line = 1;
  for await (const chunk of chunks) {
    const from = text.length; // the carried text has no newline: search only the new part
    text += chunk;
    let start = 0;
    for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', start)) {
      takeLine(text.slice(start, nl), line++, shape);
      start = nl + 1;
      if (ctx.full) yield ctx.take();
    }
    text = text.slice(start);
    if (text.length > MAX_RECORD_CHARS) {
      ctx.error(line, `a line is longer than ${MAX_RECORD_CHARS} characters`);
      text = '';
      break;
    }
  }
  takeLine(text, line, shape);
  if (ctx.pending) yield ctx.take();
}

function takeLine(text: string, line: number, shape: JsonShape): void {
  // JSON.parse allows surrounding whitespace (a CRLF's '\r' too); only blank lines are skipped.
  if (text.length === 0 || (text.charCodeAt(0) <= 0x20 && text.trim() === '')) return;
  shape.takeText(text, line);
}
