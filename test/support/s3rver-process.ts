// Runs s3rver in a process of its own, as a real store would run: the parent reads one JSON line
// with the port, then one JSON line per S3 event. Started with --openssl-legacy-provider because
// s3rver's list continuation tokens use DES, which OpenSSL 3 keeps only in its legacy provider.
import type { EventEmitter } from 'node:events';
import S3rver from 's3rver';

const [directory, bucket] = process.argv.slice(2);
if (directory === undefined || bucket === undefined) {
  process.stderr.write('usage: s3rver-process <directory> <bucket>\n');
  process.exit(2);
}
const server = new S3rver({
  address: '127.0.0.1',
  port: 0,
  silent: true,
  directory,
  configureBuckets: [{ name: bucket, configs: [] }],
});
// s3rver is a Koa application, hence an EventEmitter; its typings leave that out.
(server as unknown as EventEmitter).on('event', (event: unknown) => {
  process.stdout.write(`${JSON.stringify({ event })}\n`);
});
const address = await server.run();
process.stdout.write(`${JSON.stringify({ port: address.port })}\n`);
process.on('SIGTERM', () => {
  server.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
