// A pass-through stream that fails once too many bytes went through it: how a stream of unknown
// length (an upload, a fetched file) is held to a limit without buffering.
import { Transform, type TransformCallback } from 'node:stream';

/** Fails the stream with `tooLarge(max)` once more than `max` bytes went through. */
export class ByteLimit extends Transform {
  private seen = 0;
  constructor(
    private readonly max: number,
    private readonly tooLarge: (max: number) => Error,
  ) {
    super();
  }
  /** Bytes passed so far. */
  get bytes(): number {
    return this.seen;
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.max) done(this.tooLarge(this.max));
    else done(null, chunk);
  }
}
