// The S3-compatible store of the tests. With TEST_S3_ENDPOINT set (and TEST_S3_ACCESS_KEY_ID,
// TEST_S3_SECRET_ACCESS_KEY; region us-east-1, path style) a real store, such as the Ceph RADOS
// Gateway that scripts/ceph-rgw.sh starts: each startS3() makes a bucket of its own there, emptied
// and removed on close. Otherwise s3rver (npm) in a child process, with a fresh bucket in a
// temporary folder: it speaks S3's REST API and honours presigned URLs' expiry, but verifies no
// SigV4 signature, so what only a signature-checking store shows runs on a real store alone
// (realStoreOnly). REQUIRE_REAL_S3=1 (CI) makes a missing endpoint a failure.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  PutBucketNotificationConfigurationCommand,
  S3Client,
  type TopicConfiguration,
} from '@aws-sdk/client-s3';
import { CreateTopicCommand, DeleteTopicCommand, SNSClient } from '@aws-sdk/client-sns';

/** The store the tests were pointed at; null when they start s3rver. */
interface RealStore {
  endpoint: string;
  accessKeyId: string;
  secretAccessKey: string;
}

const REQUIRE_HINT =
  'set TEST_S3_ENDPOINT, TEST_S3_ACCESS_KEY_ID and TEST_S3_SECRET_ACCESS_KEY (scripts/ceph-rgw.sh starts one)';

function realStoreOfEnvironment(): RealStore | null {
  const endpoint = process.env.TEST_S3_ENDPOINT ?? '';
  const accessKeyId = process.env.TEST_S3_ACCESS_KEY_ID ?? '';
  const secretAccessKey = process.env.TEST_S3_SECRET_ACCESS_KEY ?? '';
  if (endpoint === '') return null;
  if (accessKeyId === '' || secretAccessKey === '') {
    throw new Error(`TEST_S3_ENDPOINT is set without its credentials: ${REQUIRE_HINT}`);
  }
  return { endpoint: endpoint.replace(/\/+$/, ''), accessKeyId, secretAccessKey };
}

const REAL_STORE = realStoreOfEnvironment();

/** Throws when the tests must have a real store (REQUIRE_REAL_S3=1) and were given none. */
function checkRequirement(): void {
  if (REAL_STORE === null && process.env.REQUIRE_REAL_S3 === '1') {
    throw new Error(`REQUIRE_REAL_S3=1 but no S3 store is configured: ${REQUIRE_HINT}`);
  }
}

/**
 * The credentials of the tests' store, as the environment variables the AWS SDK's default chain
 * reads: startS3 puts them into this process's environment (for the services the tests start in
 * it) and into `TestS3.env` (for the processes they spawn).
 */
export const S3_TEST_CREDENTIALS = {
  AWS_ACCESS_KEY_ID: REAL_STORE?.accessKeyId ?? 'S3RVER',
  // s3rver checks the key id only, so its secret can be one the tests recognise in a log.
  AWS_SECRET_ACCESS_KEY: REAL_STORE?.secretAccessKey ?? 'dx-test-aws-secret-never-logged',
  // Never let the SDK's credential chain reach for an instance-metadata address from a test.
  AWS_EC2_METADATA_DISABLED: 'true',
  AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
};

/**
 * The `skip` option of a case or suite that only a real store can run: false when the tests have
 * one; otherwise the reason, or a failure under REQUIRE_REAL_S3=1.
 */
export function realStoreOnly(): string | false {
  checkRequirement();
  return REAL_STORE === null ? `needs a real S3 store (${REQUIRE_HINT})` : false;
}

/** One S3 event notification (the shape AWS S3, MinIO, Ceph RGW and s3rver send). */
export interface S3EventRecord {
  Records: { eventName: string; s3: { bucket: { name: string }; object: { key: string; size?: number } } }[];
}

export interface TestS3 {
  /** `real`: the store of TEST_S3_ENDPOINT; `s3rver`: an emulator started for this call. */
  kind: 'real' | 's3rver';
  endpoint: string;
  bucket: string;
  /** Configuration variables that point a service at this bucket, its credentials included. */
  env: Record<string, string>;
  /** Calls `listener` with every notification the store sends for an object created under datasets/. */
  onEvent(listener: (event: S3EventRecord) => void): Promise<void>;
  /**
   * Has the store itself POST its notifications of objects created under datasets/ to `url`
   * (a real store with the SNS-style topic API of Ceph RGW; s3rver cannot).
   */
  notifyTo(url: string, options: { persistent: boolean }): Promise<void>;
  close(): Promise<void>;
}

let counter = 0;

/** A bucket with nothing in it on the tests' store; sets the SDK's credentials in this process. */
export async function startS3(): Promise<TestS3> {
  checkRequirement();
  Object.assign(process.env, S3_TEST_CREDENTIALS);
  // Bucket names are global to the store: unique to this process and call, lower case.
  const bucket = `dx-test-${process.pid}-${counter++}-${randomBytes(3).toString('hex')}`;
  return REAL_STORE !== null ? startOnRealStore(REAL_STORE, bucket) : startS3rver(bucket);
}

/** The settings of `bucket` at `endpoint`, as the service reads them. */
function serviceEnv(endpoint: string, bucket: string): Record<string, string> {
  return {
    STORAGE: 's3',
    S3_BUCKET: bucket,
    S3_ENDPOINT: endpoint,
    S3_FORCE_PATH_STYLE: 'true',
    S3_REGION: 'us-east-1',
    ...S3_TEST_CREDENTIALS,
  };
}

async function startS3rver(bucket: string): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'dx-s3-'));
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
      const key = msg.event?.Records[0]?.s3.object.key ?? '';
      if (msg.event !== undefined && key.startsWith('datasets/')) for (const l of listeners) l(msg.event);
    });
  });
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    kind: 's3rver',
    endpoint,
    bucket,
    env: serviceEnv(endpoint, bucket),
    onEvent(listener) {
      listeners.push(listener);
      return Promise.resolve();
    },
    notifyTo() {
      return Promise.reject(new Error('s3rver sends no notifications of its own: this needs a real store'));
    },
    async close() {
      child.kill('SIGTERM');
      await exited;
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

async function startOnRealStore(store: RealStore, bucket: string): Promise<TestS3> {
  const clientConfig = {
    endpoint: store.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: store.accessKeyId, secretAccessKey: store.secretAccessKey },
  };
  const s3 = new S3Client({
    ...clientConfig,
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  // Ceph RGW's topics (push endpoints of bucket notifications) are made through an SNS-style API.
  const sns = new SNSClient(clientConfig);
  try {
    await s3.send(new CreateBucketCommand({ Bucket: bucket }));
  } catch (err) {
    s3.destroy();
    sns.destroy();
    throw new Error(`could not create bucket ${bucket} at ${store.endpoint}: ${String(err)}`);
  }
  const topics: string[] = [];
  const notifications: TopicConfiguration[] = [];
  let recorder: Awaited<ReturnType<typeof startRecorder>> | null = null;

  /** Adds a notification of objects created under datasets/ to a topic pushing to `url`. */
  const addNotification = async (id: string, url: string, persistent: boolean) => {
    const topic = await sns.send(
      new CreateTopicCommand({
        Name: `${bucket}-${id}`,
        Attributes: { 'push-endpoint': url, persistent: String(persistent) },
      }),
    );
    if (topic.TopicArn === undefined) throw new Error('the store answered CreateTopic without a topic ARN');
    topics.push(topic.TopicArn);
    notifications.push({
      Id: id,
      TopicArn: topic.TopicArn,
      Events: ['s3:ObjectCreated:*'],
      Filter: { Key: { FilterRules: [{ Name: 'prefix', Value: 'datasets/' }] } },
    });
    // The whole configuration each time: AWS S3 replaces it (Ceph RGW 16 adds to it).
    await s3.send(
      new PutBucketNotificationConfigurationCommand({
        Bucket: bucket,
        NotificationConfiguration: { TopicConfigurations: notifications },
      }),
    );
  };

  return {
    kind: 'real',
    endpoint: store.endpoint,
    bucket,
    env: serviceEnv(store.endpoint, bucket),
    async onEvent(listener) {
      if (recorder === null) {
        // The store POSTs to a server of this process, on loopback: a store on this machine.
        recorder = await startRecorder();
        await addNotification('recorder', recorder.url, false);
      }
      recorder.listeners.push(listener);
    },
    async notifyTo(url, { persistent }) {
      await addNotification(`push${notifications.length}`, url, persistent);
    },
    async close() {
      try {
        await emptyBucket(s3, bucket);
        await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
        for (const arn of topics) await sns.send(new DeleteTopicCommand({ TopicArn: arn }));
      } finally {
        await recorder?.close();
        s3.destroy();
        sns.destroy();
      }
    },
  };
}

/** An HTTP server on loopback that hands every JSON body POSTed to it to its listeners. */
async function startRecorder() {
  const listeners: ((event: S3EventRecord) => void)[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let event: S3EventRecord;
      try {
        event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as S3EventRecord;
      } catch {
        res.statusCode = 400;
        res.end();
        return;
      }
      res.end();
      for (const l of listeners) l(event);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    listeners,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Deletes every object and aborts every multipart upload in `bucket`. */
async function emptyBucket(s3: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const page = await s3.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key !== undefined ? [{ Key: o.Key }] : []));
    if (keys.length === 0) break;
    await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys, Quiet: true } }));
  }
  const uploads = await s3.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  for (const u of uploads.Uploads ?? []) {
    await s3.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }));
  }
}
