// An S3-compatible server for the tests: s3rver (npm) in a child process on loopback, with a fresh
// bucket in a temporary folder. It speaks S3's REST API to the real AWS SDK and honours presigned
// URLs' expiry, but it does not verify SigV4 signatures: forged signatures need a real store.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

/** The credentials s3rver accepts; the SDK finds them through its default chain (the environment). */
export const S3_TEST_CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  // s3rver checks the key id only (it does not verify SigV4), so the secret can be one the
  // tests recognise if it ever leaks into a log.
  AWS_SECRET_ACCESS_KEY: 'dx-test-aws-secret-never-logged',
  // Never let the SDK's credential chain reach for an instance-metadata address from a test.
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/** One S3 event notification as s3rver emits it (the shape AWS S3 and MinIO send). */
export interface S3EventRecord {
  Records: { eventName: string; s3: { bucket: { name: string }; object: { key: string; size?: number } } }[];
}

export interface TestS3 {
  endpoint: string;
  bucket: string;
  /** Configuration variables that point the service at this server. */
  env: Record<string, string>;
  /** Calls `listener` for every object-created or object-removed event. */
  onEvent(listener: (event: S3EventRecord) => void): void;
  close(): Promise<void>;
}

let counter = 0;

/** Starts s3rver on a free loopback port with one empty bucket; sets the SDK's credentials. */
export async function startS3(): Promise<TestS3> {
  Object.assign(process.env, S3_TEST_CREDENTIALS);
  const directory = mkdtempSync(join(tmpdir(), 'dx-s3-'));
  const bucket = `dx-test-${process.pid}-${counter++}`;
  const script = fileURLToPath(new URL('./s3rver-process.js', import.meta.url));
  const child = spawn(process.execPath, ['--openssl-legacy-provider', script, directory, bucket], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const listeners: ((event: S3EventRecord) => void)[] = [];
  const lines = createInterface({ input: child.stdout });
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
    lines.on('line', (line) => {
      const msg = JSON.parse(line) as { port?: number; event?: S3EventRecord };
      if (msg.port !== undefined) resolve(msg.port);
      if (msg.event !== undefined) for (const l of listeners) l(msg.event);
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    bucket,
    env: {
      STORAGE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_REGION: 'us-east-1',
    },
    onEvent(listener) {
      listeners.push(listener);
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
