// Where a response's head ends and its body bytes lie inside the buffers read from the upstream, so
// the body can be handed on as views of those buffers instead of the copies node's parser binding
// makes for every body chunk (`Buffer::Copy` before `onBody`). It decides nothing: the upstream
// connection runs llhttp over exactly the bytes located here first, and uses the spans only if
// llhttp accepted them and ended the message (or not) where the locator did. Framings whose reading
// could be ambiguous are not located at all: llhttp's own body callback delivers those.

/** How a located body is delimited. */
export const BY_LENGTH = 1;
export const CHUNKED = 2;
export const UNTIL_CLOSE = 3;
export type Framing = typeof BY_LENGTH | typeof CHUNKED | typeof UNTIL_CLOSE;

// Body states.
const IDLE = 0;
const LENGTH_DATA = 1;
const CHUNK_SIZE = 2;
/** The rest of a chunk-size line (extensions) up to its LF. */
const CHUNK_SIZE_LINE = 3;
const CHUNK_DATA = 4;
/** The CRLF after a chunk's data. */
const CHUNK_DATA_END = 5;
/** At the start of a trailer line (or the final empty line). */
const TRAILER_START = 6;
const TRAILER_LINE = 7;
/** The LF of the final empty line. */
const FINAL_LF = 8;
const CLOSE_DATA = 9;

const CR = 13;
const LF = 10;
/** What ends a head in llhttp's strict mode (requests and responses alike). */
export const HEAD_END = Buffer.from('\r\n\r\n', 'latin1');
/** Chunk sizes above this cannot be counted exactly in a double: such a body is given up. */
const MAX_CHUNK = 2 ** 52;

/** Result of `scanBody` when the located body goes on past the buffer. */
export const CONTINUES = -1;
/** Result of `scanBody` when the bytes are not what llhttp would accept (llhttp will say why). */
export const CONFUSED = -2;

export class BodyLocator {
  private state = IDLE;
  /** Bytes left in the body (by length) or in the current chunk. */
  private remaining = 0;
  /** How many bytes of CRLFCRLF the previous buffer ended with, while in a head. */
  private headMatch = 0;

  /** Whether a located body is being read. */
  get inBody(): boolean {
    return this.state !== IDLE;
  }

  /** Forgets everything (a new exchange, or the connection is done). */
  reset(): void {
    this.state = IDLE;
    this.remaining = 0;
    this.headMatch = 0;
  }

  /**
   * The position just after the head (its CRLFCRLF) in `data` from `from`, or -1 when the head goes
   * on past the buffer. llhttp in strict mode ends a head only at the first CRLFCRLF (no bare LF).
   */
  headEnd(data: Buffer, from: number): number {
    let i = from;
    // A CRLFCRLF split across reads.
    while (this.headMatch > 0 && i < data.length) {
      const want = this.headMatch === 1 || this.headMatch === 3 ? LF : CR;
      const c = data[i++] as number;
      if (c === want) {
        this.headMatch += 1;
        if (this.headMatch === 4) {
          this.headMatch = 0;
          return i;
        }
      } else {
        this.headMatch = c === CR ? 1 : 0;
      }
    }
    const at = data.indexOf(HEAD_END, i);
    if (at >= 0) {
      this.headMatch = 0;
      return at + 4;
    }
    // Remember a partial CRLFCRLF at the end.
    const n = data.length;
    let tail = 0;
    if (n - i >= 3 && data[n - 3] === CR && data[n - 2] === LF && data[n - 1] === CR) tail = 3;
    else if (n - i >= 2 && data[n - 2] === CR && data[n - 1] === LF) tail = 2;
    else if (n - i >= 1 && data[n - 1] === CR) tail = 1;
    if (tail > 0 || i < n) this.headMatch = tail;
    return -1;
  }

  /** A body of `framing` starts after the head just located (`length` for BY_LENGTH, > 0). */
  startBody(framing: Framing, length: number): void {
    this.remaining = framing === BY_LENGTH ? length : 0;
    this.state = framing === BY_LENGTH ? LENGTH_DATA : framing === CHUNKED ? CHUNK_SIZE : CLOSE_DATA;
  }

  /**
   * Reads the body in `data` from `from`, appending the [start, end) pairs of its data bytes to
   * `spans`. Returns the position just after the body's end, CONTINUES, or CONFUSED.
   */
  scanBody(data: Buffer, from: number, spans: number[]): number {
    const n = data.length;
    let i = from;
    while (i < n) {
      switch (this.state) {
        case LENGTH_DATA:
        case CHUNK_DATA: {
          const take = Math.min(this.remaining, n - i);
          spans.push(i, i + take);
          i += take;
          this.remaining -= take;
          if (this.remaining === 0) {
            if (this.state === LENGTH_DATA) {
              this.state = IDLE;
              return i;
            }
            this.state = CHUNK_DATA_END;
          }
          break;
        }
        case CLOSE_DATA:
          spans.push(i, n);
          return CONTINUES;
        case CHUNK_SIZE: {
          const c = data[i] as number;
          const digit = hexValue(c);
          if (digit < 0) {
            // The size ends (extensions or CRLF follow); llhttp requires at least one digit.
            this.state = CHUNK_SIZE_LINE;
            break;
          }
          this.remaining = this.remaining * 16 + digit;
          if (this.remaining > MAX_CHUNK) return CONFUSED;
          i++;
          break;
        }
        case CHUNK_SIZE_LINE: {
          const lf = data.indexOf(LF, i);
          if (lf < 0) return CONTINUES;
          i = lf + 1;
          this.state = this.remaining === 0 ? TRAILER_START : CHUNK_DATA;
          break;
        }
        case CHUNK_DATA_END:
          // CR then LF (llhttp checks them).
          i++;
          if (++this.remaining === 2) {
            this.remaining = 0;
            this.state = CHUNK_SIZE;
          }
          break;
        case TRAILER_START:
          if (data[i] === CR) {
            i++;
            this.state = FINAL_LF;
          } else this.state = TRAILER_LINE;
          break;
        case TRAILER_LINE: {
          const lf = data.indexOf(LF, i);
          if (lf < 0) return CONTINUES;
          i = lf + 1;
          this.state = TRAILER_START;
          break;
        }
        case FINAL_LF:
          this.state = IDLE;
          return i + 1;
        default:
          return CONFUSED;
      }
    }
    return CONTINUES;
  }
}

/** The value of 1 to 15 decimal digits, else -1 (llhttp has refused anything else already). */
function digits(v: string): number {
  if (v.length === 0 || v.length > 15) return -1;
  let n = 0;
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    n = n * 10 + c;
  }
  return n;
}

function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

/**
 * The framing of a final response's body from its raw headers, or 0 when llhttp's own body
 * callback should deliver it: only the unambiguous cases are located (exactly one Content-Length
 * of digits and no Transfer-Encoding; exactly one `Transfer-Encoding: chunked` and no length; or
 * neither, which a response ends by closing). `out[0]` receives the length.
 */
export function locatableFraming(raw: readonly string[], out: number[]): Framing | 0 {
  let length = -1;
  let lengths = 0;
  let encodings = 0;
  let chunked = false;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i] as string;
    // Only the two names matter; compare lengths first so most headers cost one check.
    if (name.length === 14 && name.toLowerCase() === 'content-length') {
      lengths++;
      const v = raw[i + 1] as string;
      length = digits(v);
    } else if (name.length === 17 && name.toLowerCase() === 'transfer-encoding') {
      encodings++;
      chunked = (raw[i + 1] as string).toLowerCase() === 'chunked';
    }
  }
  if (lengths === 1 && encodings === 0) {
    if (length < 0) return 0;
    out[0] = length;
    return BY_LENGTH;
  }
  if (lengths === 0 && encodings === 1) return chunked ? CHUNKED : 0;
  if (lengths === 0 && encodings === 0) return UNTIL_CLOSE;
  return 0;
}

/**
 * Where the body of a request declared by length starts in `data`, when it lies whole there: the
 * request starts at `from`, after `headsBefore` requests without a body. -1 when that cannot be
 * told for sure (the parser's body callback then delivers the body). In strict mode llhttp ends a
 * head only at its first CRLFCRLF and then takes exactly Content-Length bytes. Each request must
 * start with its method's first letter (llhttp skips empty lines between requests, which would
 * throw the count off).
 */
export function locateRequestBody(data: Buffer, from: number, headsBefore: number, length: number): number {
  let at = from;
  for (let heads = headsBefore; heads >= 0; heads--) {
    const c = data[at] ?? 0;
    if (c < 65 || c > 90) return -1;
    const end = data.indexOf(HEAD_END, at);
    if (end < 0) return -1;
    if (heads === 0) return end + 4 + length <= data.length ? end + 4 : -1;
    at = end + 4;
  }
  return -1;
}
