// Bytes to text with the defects kept visible: a byte sequence that is not UTF-8 becomes a marker
// (not a silent U+FFFD) so the reader can name the record and property that held it, and the
// checks that find NUL characters and such markers in a value (neither can be stored as text:
// PostgreSQL refuses NUL in text, and a file's text must not change without a word).
import { isUtf8 } from 'node:buffer';
import type { InvalidUtf8 } from '../../config.js';

export type { InvalidUtf8 };

/**
 * Stands for one invalid byte sequence when they are rejected: a lone surrogate, which decoding
 * valid UTF-8 never yields, so `isWellFormed()` (native, and immediate on one-byte strings) finds
 * it without a loop of ours.
 */
export const INVALID_BYTES_MARK = '\uDC00';

const REPLACEMENT_BYTES = Buffer.from([0xef, 0xbf, 0xbd]); // U+FFFD as UTF-8

/** Decodes UTF-8 chunk by chunk, carrying a sequence cut at a chunk's end over to the next one. */
export class Utf8Decoder {
  private carry: Buffer | null = null;

  constructor(private readonly invalid: InvalidUtf8) {}

  write(chunk: Buffer): string {
    let bytes = chunk;
    if (this.carry !== null) {
      bytes = Buffer.concat([this.carry, chunk]);
      this.carry = null;
    }
    const cut = incompleteTail(bytes);
    if (cut < bytes.length) {
      this.carry = Buffer.from(bytes.subarray(cut));
      bytes = bytes.subarray(0, cut);
    }
    return this.decode(bytes);
  }

  /** The text of a sequence the input ended in the middle of (invalid, then). */
  end(): string {
    const rest = this.carry;
    this.carry = null;
    return rest === null ? '' : this.decode(rest);
  }

  private decode(bytes: Buffer): string {
    // The common case costs one native validation pass on top of the decoding.
    if (this.invalid === 'replace' || isUtf8(bytes)) return bytes.toString('utf8');
    return markInvalid(bytes);
  }
}

/** Where a multi-byte sequence cut off by the end of `b` starts (b.length when none is). */
function incompleteTail(b: Buffer): number {
  const n = b.length;
  for (let i = n - 1; i >= 0 && i >= n - 4; i--) {
    const c = b[i] ?? 0;
    if ((c & 0xc0) === 0x80) continue; // a continuation byte: look further back for the lead
    const length = c >= 0xf0 ? 4 : c >= 0xe0 ? 3 : c >= 0xc0 ? 2 : 1;
    return i + length > n ? i : n;
  }
  return n;
}

/** Decodes bytes holding invalid sequences: each becomes the mark, a real U+FFFD stays one. */
function markInvalid(bytes: Buffer): string {
  let out = '';
  let from = 0;
  for (;;) {
    // EF BF BD is never part of a longer sequence (EF is a lead byte), so splitting there is exact.
    const at = bytes.indexOf(REPLACEMENT_BYTES, from);
    out += bytes.toString('utf8', from, at < 0 ? bytes.length : at).replaceAll('\uFFFD', INVALID_BYTES_MARK);
    if (at < 0) return out;
    out += '\uFFFD';
    from = at + REPLACEMENT_BYTES.length;
  }
}

// In JSON text, escapes that decode to what text cannot hold: \u0000 and lone surrogates.
const SUSPECT_ESCAPE = /\\u(?:0000|[dD][89a-fA-F])/;

/** True when some value in `text` may hold a NUL or a lone surrogate: its values must be checked. */
export function suspectText(text: string): boolean {
  return text.includes('\0') || !text.isWellFormed();
}

/** suspectText for JSON text, where escapes can make the same characters. */
export function suspectJsonText(text: string): boolean {
  return suspectText(text) || (text.includes('\\u') && SUSPECT_ESCAPE.test(text));
}

/** Why a value cannot be stored as text, or undefined when it can. */
export function textDefect(value: string): string | undefined {
  if (value.includes('\0')) return 'the value contains a NUL character (U+0000), which cannot be stored';
  if (value.isWellFormed()) return undefined;
  return value.includes(INVALID_BYTES_MARK)
    ? 'the value has bytes that are not valid UTF-8 (set LOAD_INVALID_UTF8=replace to load them as U+FFFD)'
    : 'the value has an unpaired UTF-16 surrogate (a \\uD800-\\uDFFF escape), which is not a character';
}

/** `text` as it may be stored and shown: NUL characters and lone surrogates become U+FFFD. */
export function storableText(text: string): string {
  if (!text.includes('\0') && text.isWellFormed()) return text;
  return text.replaceAll('\0', '\uFFFD').toWellFormed();
}
