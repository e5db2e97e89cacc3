// Client connections read like the upstream ones: into one shared buffer, handed straight to the
// connection's parser, without a Buffer allocated per read and without the readable-stream
// machinery (push, 'data' events). `net.Server` has no `onread` option for the sockets it accepts,
// so the accepted socket (paused, not yet reading) gives its handle to a socket that has one. This
// leans on `Socket#_handle`, guarded by client-socket.test.ts on every supported Node.
import { Socket } from 'node:net';

/** Where every client connection reads into; each read is parsed (and copied) before the next. */
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024);

interface HandleOwner {
  _handle: object | null;
}

/**
 * Takes over an accepted connection (the server must be created with `pauseOnConnect`): returns a
 * socket on the same connection whose reads go to `onData` (valid only during the call), with
 * `highWaterMark` for its write buffer. Falls back to 'data' events if the handle is not there.
 */
export function adoptClientSocket(
  accepted: Socket,
  onData: (data: Buffer) => void,
  highWaterMark: number,
): Socket {
  const owner = accepted as unknown as HandleOwner;
  const handle = owner._handle;
  if (handle === null || typeof handle !== 'object') {
    accepted.on('data', onData);
    accepted.resume();
    return accepted;
  }
  // The accepted socket lets go of the handle and closes without touching it (it still counts
  // itself out of the server's connections).
  owner._handle = null;
  accepted.destroy();
  const options = {
    handle,
    allowHalfOpen: true,
    readableHighWaterMark: highWaterMark,
    writableHighWaterMark: highWaterMark,
    onread: {
      buffer: READ_BUFFER,
      callback: (length: number, buffer: Uint8Array): boolean => {
        onData((buffer as Buffer).subarray(0, length));
        return true;
      },
    },
  };
  return new Socket(options);
}
