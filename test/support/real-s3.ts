// A bucket of its own for a test that runs separate `dx serve` processes: on the S3-compatible
// store named by TEST_S3_ENDPOINT, TEST_S3_ACCESS_KEY_ID and TEST_S3_SECRET_ACCESS_KEY (region
// us-east-1, path style; CI points them at Ceph's RADOS Gateway, which verifies SigV4), else on
// s3rver. REQUIRE_REAL_S3=1 (CI) makes the real store's absence a failure.
import { randomBytes } from 'node:crypto';
import {
  AbortMultipartUploadCommand,
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteObjectsCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  S3Client,
} from '@aws-sdk/client-s3';
import { S3_TEST_CREDENTIALS, startS3 } from './s3-server.js';

/** A fresh bucket and the variables that point `dx serve` at it. */
export interface TestBucket {
  /** Which store: `real` (TEST_S3_ENDPOINT) or `s3rver`. */
  store: 'real' | 's3rver';
  /** STORAGE, S3_* and the AWS credentials, for a child process's environment. */
  env: Record<string, string>;
  /** The secret access key, which no log may hold. */
  secret: string;
  /** Empties and deletes the bucket (or stops s3rver). */
  close(): Promise<void>;
}

/** Makes a bucket on the real store when the environment names one, else starts s3rver. */
export async function startTestBucket(): Promise<TestBucket> {
  const endpoint = process.env.TEST_S3_ENDPOINT ?? '';
  const accessKeyId = process.env.TEST_S3_ACCESS_KEY_ID ?? '';
  const secretAccessKey = process.env.TEST_S3_SECRET_ACCESS_KEY ?? '';
  if (endpoint === '' || accessKeyId === '' || secretAccessKey === '') {
    if (process.env.REQUIRE_REAL_S3 === '1')
      throw new Error(
        'REQUIRE_REAL_S3=1 but TEST_S3_ENDPOINT, TEST_S3_ACCESS_KEY_ID and TEST_S3_SECRET_ACCESS_KEY are not all set',
      );
    const s3 = await startS3();
    return {
      store: 's3rver',
      env: { ...s3.env, ...S3_TEST_CREDENTIALS },
      secret: S3_TEST_CREDENTIALS.AWS_SECRET_ACCESS_KEY,
      close: () => s3.close(),
    };
  }
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
  });
  const bucket = `s3e2e-${randomBytes(6).toString('hex')}`;
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  return {
    store: 'real',
    env: {
      STORAGE: 's3',
      S3_BUCKET: bucket,
      S3_ENDPOINT: endpoint,
      S3_FORCE_PATH_STYLE: 'true',
      S3_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      AWS_EC2_METADATA_DISABLED: 'true',
    },
    secret: secretAccessKey,
    async close() {
      try {
        await emptyBucket(client, bucket);
        await client.send(new DeleteBucketCommand({ Bucket: bucket }));
      } finally {
        client.destroy();
      }
    },
  };
}

/** Deletes every object and aborts every multipart upload in `bucket`. */
async function emptyBucket(client: S3Client, bucket: string): Promise<void> {
  for (;;) {
    const page = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
    const keys = (page.Contents ?? []).flatMap((o) => (o.Key !== undefined ? [{ Key: o.Key }] : []));
    if (keys.length === 0) break;
    await client.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: keys } }));
  }
  const uploads = await client.send(new ListMultipartUploadsCommand({ Bucket: bucket }));
  for (const u of uploads.Uploads ?? []) {
    await client.send(new AbortMultipartUploadCommand({ Bucket: bucket, Key: u.Key, UploadId: u.UploadId }));
  }
}
