// Streaming reader of newline-delimited JSON: one object per line, blank lines skipped.
import { MAX_RECORD_CHARS, type LoadContext, type ParsedBatch } from './context.js';
import { JsonShape } from './json-record.js';
import { suspectJsonText } from './text.js';

/** Reads newline-delimited JSON objects into typed rows; errors name the physical line. */
export async function* readNdjson(
  chunks: AsyncIterable<string>,
  ctx: LoadContext,
): AsyncGenerator<ParsedBatch> {
  const shape = new JsonShape(ctx);
  let text = '';
  let line = 1;
  let record = ''; // the line being checked: its text is the record's
  ctx.recordText = () => record.replace(/\r$/, '');
  const take = (lineText: string) => {
    // JSON.parse allows surrounding whitespace (a CRLF's '\r' too); only blank lines are skipped.
    if (lineText.length === 0 || (lineText.charCodeAt(0) <= 0x20 && lineText.trim() === '')) return;
    record = lineText;
    shape.takeText(lineText, line);
  };
  for await (const chunk of chunks) {
    const from = text.length; // the carried text has no newline: search only the new part
    text += chunk;
    shape.check = suspectJsonText(text);
    let start = 0;
    for (let nl = text.indexOf('\n', from); nl >= 0; nl = text.indexOf('\n', start)) {
      take(text.slice(start, nl));
      line++;
      start = nl + 1;
      if (ctx.full) yield ctx.take();
    }
    text = text.slice(start);
    if (text.length > MAX_RECORD_CHARS) {
      ctx.fileError(line, `a line is longer than ${MAX_RECORD_CHARS} characters`);
      text = '';
      break;
    }
  }
  shape.check = suspectJsonText(text);
  take(text);
  if (ctx.pending) yield ctx.take();
}
