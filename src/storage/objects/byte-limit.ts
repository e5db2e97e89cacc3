// A pass-through stream that fails once too many bytes went through it: how a put of unknown
// length is held to UPLOAD_MAX_BYTES without buffering.
import { Transform, type TransformCallback } from 'node:stream';
import { ObjectTooLarge } from './object-store.js';

/** Fails the stream with ObjectTooLarge once more than `max` bytes went through. */
export class ByteLimit extends Transform {
  private seen = 0;
  constructor(private readonly max: number) {
    super();
  }
  /** Bytes passed so far. */
  get bytes(): number {
    return this.seen;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.max) done(new ObjectTooLarge(this.max));
    else done(null, chunk);
  }
}
