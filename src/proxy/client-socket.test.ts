// Guards the take-over of accepted connections (client-socket.ts), which leans on `Socket#_handle`:
// CI runs this on every supported Node.js (22 and 24).
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { adoptClientSocket } from './client-socket.js';

/** A server whose accepted connections are adopted; `received` collects what each read delivered. */
async function adoptingServer() {
  const received: string[] = [];
  const adopted: Socket[] = [];
  const accepted: Socket[] = [];
  const server = createServer({ pauseOnConnect: true, allowHalfOpen: true }, (socket) => {
    accepted.push(socket);
    adopted.push(adoptClientSocket(socket, (data) => received.push(data.toString('latin1')), 1024));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return { server, port, received, adopted, accepted };
}

void describe('adoptClientSocket', () => {
  void it('takes the handle over: reads arrive through the shared buffer, writes and end work', async () => {
    const s = await adoptingServer();
    const client = connect(s.port, '127.0.0.1');
    await once(client, 'connect');
    client.write('hello');
    while (s.received.join('') !== 'hello') await new Promise((r) => setTimeout(r, 5));
    const socket = s.adopted[0] as Socket;
    // The handle was there to take: the socket is a new one, the accepted one is closed.
    assert.notEqual(socket, s.accepted[0]);
    assert.equal(s.accepted[0]?.destroyed, true);
    assert.equal(socket.writableHighWaterMark, 1024);
    const reply = once(client, 'data');
    socket.write('world');
    assert.equal(String((await reply)[0]), 'world');
    // Paused: nothing is read until it resumes.
    socket.pause();
    client.write('later');
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(s.received.join(''), 'hello');
    socket.resume();
    while (s.received.join('') !== 'hellolater') await new Promise((r) => setTimeout(r, 5));
    // The client's end arrives as 'end' (the socket is half-open, as the server's option says).
    const ended = once(socket, 'end');
    client.end();
    await ended;
    socket.end();
    await once(client, 'close');
    // The server counts the connection out once it is gone, and closes.
    const closed = once(s.server, 'close');
    s.server.close();
    await closed;
  });
});
