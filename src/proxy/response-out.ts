// Gathering a response's bytes for the client: the head and the body parts one upstream read
// produced go out in one write, re-framed as one chunk when the response goes out chunked.
import type { ClientSide } from './client-side.js';
import { ExchangeRecord } from './exchange-record.js';
import { inSharedReadBuffer } from './read-buffers.js';
import { chunkHead, CRLF, LAST_CHUNK } from './wire.js';

/**
 * Output gathered from one upstream packet up to this size is joined into one string (one write;
 * body bytes as latin1, one character per byte): cheaper than filling a Buffer from the head's
 * string. Larger output goes out uncopied in one writev.
 */
const COALESCE_LIMIT = 16 * 1024;

/** An exchange's response output: what was gathered since the last write to the client. */
export class ResponseOutput extends ExchangeRecord {
  /** The body goes out chunked (the upstream's was chunked or close-delimited). */
  protected chunkedOut = false;
  private out: (string | Buffer)[] = [];
  private outBytes = 0;
  /** Body bytes gathered into the chunk being built (chunked output), and its size line's slot. */
  private runBytes = 0;
  private runAt = 0;

  /** Adds a head (or other framing text) to the output. */
  protected gatherText(text: string): void {
    this.out.push(text);
    this.outBytes += text.length;
  }

  /** Adds body bytes to the output (counted as sent). */
  protected gatherBody(chunk: Buffer): void {
    this.bytesOut += chunk.length;
    if (this.chunkedOut && this.runBytes === 0) {
      // All body bytes of one upstream read go out as one chunk: its size line is filled in when
      // it is written (fewer parts per write than one chunk per upstream chunk).
      this.runAt = this.out.length;
      this.out.push('');
    }
    this.runBytes += chunk.length;
    this.out.push(chunk);
    this.outBytes += chunk.length;
  }

  /** Ends the body: the last chunk of chunked output. */
  protected gatherEnd(): void {
    this.closeChunk();
    if (this.chunkedOut) this.gatherText(LAST_CHUNK);
  }

  /**
   * Writes what was gathered to the client; null when there was nothing, else whether its socket
   * took it without filling up.
   */
  protected writeGathered(conn: ClientSide): boolean | null {
    this.closeChunk();
    const { out } = this;
    if (out.length === 0) return null;
    let ok: boolean;
    if (out.length === 1) {
      ok = conn.write(kept(out[0] as string | Buffer));
    } else if (this.outBytes <= COALESCE_LIMIT) {
      let data = '';
      for (const part of out) data += typeof part === 'string' ? part : part.toString('latin1');
      ok = conn.write(data);
    } else {
      for (let i = 0; i < out.length; i++) out[i] = kept(out[i] as string | Buffer);
      ok = conn.writeAll(out);
    }
    this.out = [];
    this.outBytes = 0;
    return ok;
  }

  /** Completes the chunk gathered since the last write (chunked output). */
  private closeChunk(): void {
    if (this.runBytes === 0) return;
    if (this.chunkedOut) {
      const size = chunkHead(this.runBytes);
      this.out[this.runAt] = size;
      this.out.push(CRLF);
      this.outBytes += size.length + 2;
    }
    this.runBytes = 0;
  }
}

/**
 * A part that may be queued on the client's socket: body bytes still in the upstream's shared read
 * buffer are copied (the next read overwrites it); any other buffer is written as it is.
 */
function kept(part: string | Buffer): string | Buffer {
  return typeof part !== 'string' && inSharedReadBuffer(part) ? Buffer.from(part) : part;
}
