// The buffers plain upstream connections read into. Most reads land in one shared buffer, whose
// bytes are valid only until the next read; a response body going on past a read is read into
// buffers a connection takes for itself, so its bytes can go to the client as views without a copy.

/** Size of one read from an upstream. */
export const READ_SIZE = 256 * 1024;
/** Where plain upstream connections read into, until a response's body goes on past a read. */
export const SHARED_READ_BUFFER = Buffer.allocUnsafeSlow(READ_SIZE);

/** Whether `chunk` lies in the shared read buffer (valid only until the next read). */
export const inSharedReadBuffer = (chunk: Buffer): boolean => chunk.buffer === SHARED_READ_BUFFER.buffer;

/**
 * Read buffers of connections streaming a long body: a buffer is reused only once the client has
 * taken its bytes. Spare ones are kept for the next long body, up to a bound.
 */
const spareBuffers: Buffer[] = [];
const MAX_SPARE_BUFFERS = 8;

/** A read buffer for a connection's own use: a spare one, else a new one. */
export function takeReadBuffer(): Buffer {
  return spareBuffers.pop() ?? Buffer.allocUnsafeSlow(READ_SIZE);
}

/** Gives back a buffer whose bytes nobody reads any more. */
export function spareReadBuffer(buffer: Buffer): void {
  if (spareBuffers.length < MAX_SPARE_BUFFERS) spareBuffers.push(buffer);
}
