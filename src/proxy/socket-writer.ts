// Writes of the proxy's small strings (heads, small answers) straight to the socket's libuv handle,
// as `net.Socket#write` itself makes them, without the writable stream's JavaScript around the call
// (write, _write, the socket's _writeGeneric, afterWriteDispatched, onwrite and their state) and
// without a new write request object per write. It leans on two internals of Node: the socket's
// `_handle` and the `WriteWrap` request object of the `stream_wrap` binding (reached through
// `process.binding`, which Node keeps for a fixed list of bindings). socket-writer.test.ts guards
// both on every supported Node; where either is missing, every write goes through `Socket#write`
// as before.
import type { Socket } from 'node:net';
import { getSystemErrorName } from 'node:util';

/** What `Socket#write` uses from the `stream_wrap` binding. */
interface StreamWrapBinding {
  WriteWrap: new () => WriteRequest;
  streamBaseState: Int32Array;
  kLastWriteWasAsync: number;
}

/**
 * A write request: the binding calls its `oncomplete` when a queued write finishes, and reads
 * nothing else of it (`writer` is ours).
 */
interface WriteRequest {
  oncomplete: (this: WriteRequest, status: number) => void;
  writer: SocketWriter;
}

/** The part of a TCP handle used here (node's src/stream_base.cc). */
interface WritableHandle {
  writeLatin1String(req: WriteRequest, data: string): number;
}

function loadBinding(): StreamWrapBinding | null {
  // Under --pending-deprecation, process.binding warns (DEP0111); with --throw-deprecation as well,
  // that warning would end the process: there, writes stay the stream's.
  if (process.throwDeprecation === true) return null;
  try {
    const binding = (process as unknown as { binding(name: string): Partial<StreamWrapBinding> }).binding(
      'stream_wrap',
    );
    const { WriteWrap, streamBaseState, kLastWriteWasAsync } = binding;
    if (typeof WriteWrap !== 'function' || !(streamBaseState instanceof Int32Array)) return null;
    if (typeof kLastWriteWasAsync !== 'number') return null;
    return { WriteWrap, streamBaseState, kLastWriteWasAsync };
  } catch {
    return null;
  }
}

const binding = loadBinding();
/** A request no write holds, for the next direct write. */
let spare: WriteRequest | null = null;

/** Whether writes go to the handle directly on this Node (false: every write is `Socket#write`). */
export const writesDirectly = binding !== null;

/** A write the kernel did not take whole has finished (or failed): `this` is its request. */
function onDirectWriteComplete(this: WriteRequest, status: number): void {
  this.writer.directWriteDone(status);
}

/**
 * One socket's writes. A latin1 string goes to the handle directly when nothing is queued before it
 * (no write of the stream pending, none corked, none of ours still in flight) on a plain TCP socket;
 * anything else goes through `Socket#write`, which libuv queues after ours, so the order holds.
 */
export class SocketWriter {
  /** Direct writes the kernel did not take whole, still in libuv's queue. */
  private inFlight = 0;
  private readonly direct: boolean;

  /** `onDrain`: a write returned false and everything written has since gone out. */
  constructor(
    private readonly socket: Socket,
    private readonly onDrain: () => void,
  ) {
    this.direct = binding !== null && (socket as Socket & { encrypted?: boolean }).encrypted !== true;
    socket.on('drain', onDrain);
  }

  /** Writes a latin1 string (one character per byte); false asks the caller to wait for onDrain. */
  writeLatin1(data: string): boolean {
    const socket = this.socket;
    const handle = (socket as unknown as { _handle: WritableHandle | null })._handle;
    if (
      !this.direct ||
      handle === null ||
      this.inFlight > 0 ||
      socket.writableLength !== 0 ||
      socket.writableCorked !== 0 ||
      socket.connecting ||
      socket.destroyed
    )
      return socket.write(data, 'latin1');
    const b = binding as StreamWrapBinding;
    // The binding touches the request only when the write is queued: until then one serves all.
    const req = spare ?? new b.WriteWrap();
    spare = null;
    const err = handle.writeLatin1String(req, data);
    if (err !== 0) {
      spare = req;
      this.fail(err);
      return true;
    }
    if (b.streamBaseState[b.kLastWriteWasAsync] === 0) {
      spare = req;
      return true;
    }
    // The kernel took part of it; libuv holds a copy of the rest and calls back when it is out
    // (never before this returns). The request is libuv's now: the next write takes a new one.
    req.oncomplete = onDirectWriteComplete;
    req.writer = this;
    this.inFlight++;
    return false;
  }

  /**
   * Writes a string as `writeLatin1` does, or bytes through the stream (kept there: a direct
   * request would have to hold them until written).
   */
  write(data: string | Buffer): boolean {
    return typeof data === 'string' ? this.writeLatin1(data) : this.socket.write(data);
  }

  /** Whether written bytes are still waiting to go out. */
  get holdsWrites(): boolean {
    return this.inFlight > 0 || this.socket.writableLength > 0;
  }

  /** Calls `done` once everything written so far has gone out (at once if nothing waits). */
  afterWrites(done: () => void): void {
    if (this.socket.destroyed || !this.holdsWrites) done();
    // An empty write's callback runs once every write before it, in libuv's order, has completed.
    else this.socket.write(EMPTY, () => done());
  }

  /** @internal Called by a direct write's request when it finishes. */
  directWriteDone(status: number): void {
    this.inFlight--;
    if (this.socket.destroyed) return;
    if (status < 0) this.fail(status);
    else if (this.inFlight === 0) this.onDrain();
  }

  /** A failed write destroys the socket with the error `Socket#write` would have raised. */
  private fail(errno: number): void {
    const code = getSystemErrorName(errno);
    this.socket.destroy(Object.assign(new Error(`write ${code}`), { errno, code, syscall: 'write' }));
  }
}

const EMPTY = Buffer.alloc(0);
