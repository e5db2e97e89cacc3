// Guards the direct writes of socket-writer.ts, which lean on `Socket#_handle` and the `stream_wrap`
// binding's `WriteWrap`: CI runs this on every supported Node.js (22 and 24).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { spawnSync } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { SocketWriter, writesDirectly } from './socket-writer.js';

/**
 * A connected pair on loopback: `client` is ours, reading as the proxy's sockets do (into a buffer of
 * its own, so that pausing it stops reading), `peer` the server's side (paused, not reading).
 */
async function connectedPair() {
  let peer: Socket | undefined;
  const server = createServer({ pauseOnConnect: true }, (s) => (peer = s));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = connect({
    port: (server.address() as AddressInfo).port,
    host: '127.0.0.1',
    onread: { buffer: Buffer.alloc(1024), callback: () => true },
  });
  await once(client, 'connect');
  while (peer === undefined) await new Promise((r) => setTimeout(r, 2));
  return { server, client, peer };
}

/** Counts the writes that went through the stream (`Socket#write`) rather than to the handle. */
function countStreamWrites(socket: Socket): { count: number } {
  const counter = { count: 0 };
  const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
  const counting = (...args: unknown[]): boolean => {
    counter.count++;
    return write(...args);
  };
  socket.write = counting;
  return counter;
}

/** Reads from `peer` until `bytes` bytes have arrived. */
async function readAll(peer: Socket, bytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let got = 0;
  peer.on('data', (c: Buffer) => {
    chunks.push(c);
    got += c.length;
  });
  peer.resume();
  while (got < bytes) await new Promise((r) => setTimeout(r, 5));
  return Buffer.concat(chunks);
}

/** Every byte value, repeated to `size` characters (latin1: one character per byte). */
function allBytes(size: number): string {
  let s = '';
  for (let i = 0; i < 256; i++) s += String.fromCharCode(i);
  return s.repeat(Math.ceil(size / 256)).slice(0, size);
}

void describe('SocketWriter', () => {
  void it("reaches the binding's write request on this Node", () => {
    // If this fails, Node no longer exposes what direct writes need: every write would go
    // through Socket#write (correct, but the per-request cost the direct path saves comes back).
    assert.equal(writesDirectly, true);
  });

  void it('under --throw-deprecation the binding is not asked for (its warning would end the process)', () => {
    const module = new URL('./socket-writer.js', import.meta.url).href;
    const r = spawnSync(
      process.execPath,
      [
        '--pending-deprecation',
        '--throw-deprecation',
        '--input-type=module',
        '-e',
        `const w = await import(${JSON.stringify(module)}); setTimeout(() => console.log(w.writesDirectly), 20);`,
      ],
      { encoding: 'utf8' },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'false');
  });

  void it('writes a small string to the handle, every byte value intact, and a corked one through the stream', async () => {
    const { server, client, peer } = await connectedPair();
    let drains = 0;
    const writer = new SocketWriter(client, () => drains++);
    const streamWrites = countStreamWrites(client);
    const text = allBytes(512);
    assert.equal(writer.writeLatin1(text), true);
    assert.equal(streamWrites.count, 0);
    assert.equal(writer.holdsWrites, false);
    // While corked, writes are the stream's, to go out together in one system call.
    client.cork();
    assert.equal(writer.writeLatin1('a'), true);
    client.write('b');
    assert.equal(streamWrites.count, 2);
    client.uncork();
    const got = await readAll(peer, 514);
    assert.equal(got.toString('latin1'), `${text}ab`);
    let after = false;
    writer.afterWrites(() => (after = true));
    assert.equal(after, true);
    assert.equal(drains, 0);
    client.destroy();
    server.close();
  });

  void it('a write the kernel cannot take whole: false, the rest kept in order, drain and afterWrites once out', async () => {
    const { server, client, peer } = await connectedPair();
    let drains = 0;
    const writer = new SocketWriter(client, () => drains++);
    const streamWrites = countStreamWrites(client);
    // Far more than loopback's socket buffers hold while the peer does not read.
    const big = allBytes(48 * 1024 * 1024);
    assert.equal(writer.writeLatin1(big), false);
    assert.equal(streamWrites.count, 0);
    assert.equal(writer.holdsWrites, true);
    // While it is in flight, later writes queue behind it through the stream.
    writer.writeLatin1('tail-1;');
    writer.write(Buffer.from('tail-2'));
    assert.equal(streamWrites.count, 2);
    let after = false;
    writer.afterWrites(() => (after = true));
    assert.equal(after, false);
    const got = await readAll(peer, big.length + 13);
    assert.equal(got.length, big.length + 13);
    assert.ok(got.subarray(0, big.length).equals(Buffer.from(big, 'latin1')));
    assert.equal(got.subarray(big.length).toString('latin1'), 'tail-1;tail-2');
    while (!after) await new Promise((r) => setTimeout(r, 5));
    assert.ok(drains >= 1);
    assert.equal(writer.holdsWrites, false);
    // Direct again once all is out (with a request of its own: the first is libuv's until done).
    const more = once(peer, 'data');
    const throughStream = streamWrites.count;
    assert.equal(writer.writeLatin1('again'), true);
    assert.equal(streamWrites.count, throughStream);
    assert.equal(String((await more)[0]), 'again');
    client.destroy();
    server.close();
  });

  void it('a write refused by the kernel destroys the socket with the error Socket#write gives', async () => {
    const { server, client, peer } = await connectedPair();
    // Not reading: the reset is found by the write, not by a read.
    client.pause();
    const writer = new SocketWriter(client, () => undefined);
    peer.resetAndDestroy();
    await new Promise((r) => setTimeout(r, 50));
    const error = once(client, 'error');
    writer.writeLatin1('after the reset');
    const [err] = (await error) as [NodeJS.ErrnoException];
    assert.ok(['EPIPE', 'ECONNRESET'].includes(err.code ?? ''), String(err.code));
    assert.equal(err.syscall, 'write');
    assert.equal(client.destroyed, true);
    server.close();
  });
});
