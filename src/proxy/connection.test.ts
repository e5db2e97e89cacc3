// One client connection over a real loopback socket pair, with a fake host and fake exchanges
// recording what the connection hands them: requests in order, bodies, and the bare answers it
// gives itself to what it cannot take.
import assert from 'node:assert/strict';
import { connect, createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import type { ConnectionExchange } from './client-side.js';
import { ClientConnection, type ConnectionHost } from './connection.js';
import type { RequestHeaderScan } from './headers.js';

/** An exchange that records what its connection tells it. */
class Recorder implements ConnectionExchange {
  readonly events: string[] = [];
  closeAfter = false;
  hasResponded = false;
  constructor(
    readonly method: string,
    readonly url: string,
    readonly scan: RequestHeaderScan,
    readonly keepAlive: boolean,
  ) {}
  /** Called whenever an event is recorded (the host's waiters check again). */
  onEvent: () => void = () => undefined;
  onRequestBody(chunk: Buffer): void {
    this.record(`body ${chunk.toString('latin1')}`);
  }
  private record(event: string): void {
    this.events.push(event);
    this.onEvent();
  }
  onRequestEnd(): void {
    this.record('end');
  }
  onRequestWhole(body: Buffer): void {
    this.record(`whole ${body.toString('latin1')}`);
  }
  onClientDrain(): void {}
  clientError(status: number, code: string): void {
    this.record(`error ${status} ${code}`);
  }
  abort(): void {
    this.record('abort');
  }
}

/** A host that starts exchanges and lets the test answer them. */
class Host implements ConnectionHost<Recorder> {
  closing = false;
  created: Recorder[] = [];
  started: Recorder[] = [];
  forgotten = 0;
  private waiters: (() => void)[] = [];
  createExchange(
    _conn: ClientConnection<Recorder>,
    method: string,
    url: string,
    scan: RequestHeaderScan,
    _http10: boolean,
    keepAlive: boolean,
  ): Recorder {
    const ex = new Recorder(method, url, scan, keepAlive);
    ex.onEvent = () => this.notify();
    this.created.push(ex);
    return ex;
  }
  startExchange(ex: Recorder): void {
    this.started.push(ex);
    this.notify();
  }
  forget(): void {
    this.forgotten++;
    this.notify();
  }
  /** Resolves once `ready()` holds, checked whenever something happens. */
  until(ready: () => boolean): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise((resolve) => {
      const check = () => {
        if (ready()) resolve();
        else this.waiters.push(check);
      };
      this.waiters.push(check);
    });
  }
  private notify(): void {
    for (const w of this.waiters.splice(0)) w();
  }
}

let server: Server;
let accepted: (socket: Socket) => void = () => undefined;

before(async () => {
  server = createServer({ pauseOnConnect: true, allowHalfOpen: true }, (socket) => accepted(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/** A client socket and the proxy-side connection serving it. */
async function pair(): Promise<{
  client: Socket;
  conn: ClientConnection<Recorder>;
  host: Host;
  received: () => string;
}> {
  const host = new Host();
  const served = new Promise<ClientConnection<Recorder>>((resolve) => {
    accepted = (socket) => resolve(new ClientConnection(host, socket, 64 * 1024));
  });
  const client = connect((server.address() as AddressInfo).port, '127.0.0.1');
  let text = '';
  client.on('data', (d: Buffer) => (text += d.toString('latin1')));
  const conn = await served;
  return { client, conn, host, received: () => text };
}

/** The client goes away; resolves once the connection has told the host. */
async function leave(client: Socket, host: Host): Promise<void> {
  client.destroy();
  await host.until(() => host.forgotten === 1);
}

/** Everything the client receives until the proxy side closes. */
const untilClosed = (client: Socket, received: () => string) =>
  new Promise<string>((resolve) => client.on('close', () => resolve(received())));

void describe('ClientConnection', () => {
  void it('hands a request to the host, and a request without a body ends with its head', async () => {
    const { client, conn, host, received } = await pair();
    client.write('GET /a?b=1 HTTP/1.1\r\nHost: h\r\nX-PROXYVID: pv_1\r\n\r\n');
    await host.until(() => host.started.length === 1);
    const ex = host.started[0] as Recorder;
    assert.equal(ex.method, 'GET');
    assert.equal(ex.url, '/a?b=1');
    assert.equal(ex.scan.proxyId, 'pv_1');
    assert.equal(ex.keepAlive, true);
    assert.deepEqual(ex.events, ['end']);
    // The exchange answers through the connection.
    conn.write('HTTP/1.1 204 No Content\r\n\r\n');
    conn.exchangeDone(ex);
    await new Promise<void>((resolve) => client.once('data', () => resolve()));
    assert.equal(received(), 'HTTP/1.1 204 No Content\r\n\r\n');
    await leave(client, host);
  });

  void it('answers pipelined requests one at a time, in order', async () => {
    const { client, conn, host } = await pair();
    client.write('GET /1 HTTP/1.1\r\nHost: h\r\n\r\nGET /2 HTTP/1.1\r\nHost: h\r\n\r\n');
    await host.until(() => host.created.length === 2);
    assert.deepEqual(
      host.started.map((e) => e.url),
      ['/1'],
    );
    conn.exchangeDone(host.started[0] as Recorder);
    assert.deepEqual(
      host.started.map((e) => e.url),
      ['/1', '/2'],
    );
    await leave(client, host);
  });

  void it('hands a small body that arrived with its head over whole, and a chunked one piece by piece', async () => {
    const { client, conn, host } = await pair();
    client.write('POST /p HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\n\r\nhello');
    await host.until(() => host.started.length === 1);
    assert.deepEqual(host.started[0]?.events, ['whole hello']);
    conn.exchangeDone(host.started[0]);
    client.write('POST /c HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n');
    await host.until(() => host.started.length === 2);
    const chunked = host.started[1] as Recorder;
    client.write('2\r\nde\r\n0\r\n\r\n');
    await host.until(() => chunked.events.includes('end'));
    assert.equal(chunked.events.filter((e) => e.startsWith('body')).join('|'), 'body abc|body de');
    await leave(client, host);
  });

  void it('answers a malformed request with a bare 400 and closes', async () => {
    const { client, host, received } = await pair();
    const closed = untilClosed(client, received);
    client.write('GET / HTTP/1.1\r\nHost: h\r\nBad Header\r\n\r\n');
    assert.match(await closed, /^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/);
    assert.equal(host.created.length, 0);
  });

  void it('refuses an HTTP/1.1 request without Host (400) and an unknown expectation (417)', async () => {
    for (const [head, status] of [
      ['GET / HTTP/1.1\r\n\r\n', 400],
      ['POST / HTTP/1.1\r\nHost: h\r\nExpect: magic\r\nContent-Length: 1\r\n\r\nx', 417],
    ] as const) {
      const { client, host, received } = await pair();
      const closed = untilClosed(client, received);
      client.write(head);
      assert.match(await closed, new RegExp(`^HTTP/1\\.1 ${status} `));
      assert.equal(host.created.length, 0);
    }
  });

  void it('answers Expect: 100-continue before the exchange starts', async () => {
    const { client, host, received } = await pair();
    client.write('POST / HTTP/1.1\r\nHost: h\r\nExpect: 100-continue\r\nContent-Length: 2\r\n\r\n');
    await host.until(() => host.started.length === 1);
    await new Promise<void>((resolve) => client.once('data', () => resolve()));
    assert.equal(received(), 'HTTP/1.1 100 Continue\r\n\r\n');
    await leave(client, host);
  });

  void it('a malformed body of the request in flight is reported to its exchange, then the connection ends', async () => {
    const { client, conn, host, received } = await pair();
    const closed = untilClosed(client, received);
    client.write('POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n');
    await host.until(() => host.started.length === 1);
    const ex = host.started[0] as Recorder;
    await host.until(() => ex.events.length > 0);
    assert.deepEqual(ex.events, ['error 400 HPE_INVALID_CHUNK_SIZE']);
    // The exchange gives up (as a real one does at once): nothing more is read or answered.
    conn.exchangeDone(ex);
    assert.match(await closed, /^HTTP\/1\.1 400 Bad Request\r\nConnection: close\r\n\r\n$/);
  });

  void it('a client leaving mid-exchange aborts it and the host forgets the connection', async () => {
    const { client, host } = await pair();
    client.write('GET /slow HTTP/1.1\r\nHost: h\r\n\r\n');
    await host.until(() => host.started.length === 1);
    await leave(client, host);
    assert.deepEqual(host.started[0]?.events, ['end', 'abort']);
  });
});
