// The S3-compatible object store (AWS S3, GCS interoperability, MinIO, R2) behind the ObjectStore
// seam. Clients upload and download through the store's own presigned URLs; the service streams
// objects in and out with AWS SDK v3. Credentials come from the SDK's default provider chain.
import { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  DeleteObjectCommand,
  DeleteObjectsCommand,
  GetObjectCommand,
  HeadObjectCommand,
  ListMultipartUploadsCommand,
  ListObjectsV2Command,
  ListPartsCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { ByteLimit } from '../../lib/byte-limit.js';
import {
  ObjectNotFound,
  ObjectTooLarge,
  type ObjectInfo,
  type ObjectStore,
  type PresignedRequest,
  type PresignedTransfers,
  type PutOptions,
} from './object-store.js';
import type { S3Settings } from '../../config/object-storage.js';

/** DeleteObjects takes at most this many keys per request. */
const DELETE_BATCH = 1000;

/** What the store needs: the bucket settings, and credentials when not from the default chain. */
export type S3StoreOptions = Pick<
  S3Settings,
  'bucket' | 'region' | 'endpoint' | 'publicEndpoint' | 'forcePathStyle' | 'transfers'
> & {
  credentials?: S3ClientConfig['credentials'];
};

/** Objects in one bucket of an S3-compatible store; presigns its own upload and download URLs. */
export class S3ObjectStore implements ObjectStore {
  private readonly client: S3Client;
  /** Signs URLs for the address clients use, which may differ from the service's (S3_PUBLIC_ENDPOINT). */
  private readonly presigner: S3Client;
  private readonly bucket: string;
  /** Set once the store answered that it lacks DeleteObjects (GCS's XML API): delete one by one. */
  private batchDeleteUnsupported = false;
  /** The store does not list multipart uploads (s3rver); the bucket's lifecycle rule cleans up. */
  private multipartListingUnsupported = false;
  readonly presigned: PresignedTransfers | null;

  constructor(options: S3StoreOptions) {
    this.bucket = options.bucket;
    const base: S3ClientConfig = {
      region: options.region,
      forcePathStyle: options.forcePathStyle,
      ...(options.credentials !== undefined ? { credentials: options.credentials } : {}),
      // Checksums only where S3 demands them: the newer default (CRC32 on every request, aws-chunked
      // uploads, an empty-body checksum baked into presigned PUTs) is refused by GCS, older MinIO
      // and s3rver, and would make a presigned PUT of any real file fail.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    };
    this.client = new S3Client({
      ...base,
      ...(options.endpoint !== null ? { endpoint: options.endpoint } : {}),
    });
    const publicEndpoint = options.publicEndpoint ?? options.endpoint;
    this.presigner =
      publicEndpoint === options.endpoint
        ? this.client
        : new S3Client({ ...base, ...(publicEndpoint !== null ? { endpoint: publicEndpoint } : {}) });
    this.presigned =
      options.transfers === 'direct'
        ? { put: (key, o) => this.presignPut(key, o), get: (key, o) => this.presignGet(key, o) }
        : null;
  }

  async put(key: string, body: Readable, options: PutOptions): Promise<ObjectInfo> {
    checkKey(key);
    const limited = new ByteLimit(options.maxBytes, (max) => new ObjectTooLarge(max));
    body.once('error', (err) => limited.destroy(err));
    body.pipe(limited);
    // Multipart above 5 MiB (parts appear as one object only at completion, so readers never see
    // half a file; a failed upload is aborted and leaves nothing), a single PUT below.
    const upload = new Upload({
      client: this.client,
      params: { Bucket: this.bucket, Key: key, Body: limited, ContentType: options.contentType },
      queueSize: 2,
      leavePartsOnError: false,
    });
    const onAbort = () => void upload.abort().catch(() => undefined);
    options.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await upload.done();
    } catch (err) {
      // The byte limit or the client's own stream error is the real cause, not the SDK's wrapper.
      throw limited.errored ?? body.errored ?? err;
    } finally {
      options.signal?.removeEventListener('abort', onAbort);
      body.unpipe(limited);
    }
    return { key, size: limited.bytes, lastModified: new Date() };
  }

  async get(key: string): Promise<Readable> {
    checkKey(key);
    try {
      const res = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!(res.Body instanceof Readable)) throw new Error('the S3 client returned a non-stream body');
      return res.Body;
    } catch (err) {
      if (isNotFound(err)) throw new ObjectNotFound(key);
      throw err;
    }
  }

  async head(key: string): Promise<ObjectInfo | null> {
    checkKey(key);
    try {
      const res = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      return {
        key,
        size: res.ContentLength ?? 0,
        lastModified: res.LastModified ?? new Date(0),
        ...(res.ContentType !== undefined ? { contentType: res.ContentType } : {}),
      };
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }

  async delete(key: string): Promise<void> {
    checkKey(key);
    // S3 answers 204 for an absent key too: deleting is idempotent, as the local store's is.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }

  async list(prefix: string): Promise<ObjectInfo[]> {
    checkPrefix(prefix);
    const out: ObjectInfo[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      for (const o of page.Contents ?? []) {
        if (o.Key === undefined) continue;
        out.push({ key: o.Key, size: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0) });
      }
      token = page.IsTruncated === true ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async removeAbandonedPuts(before: number): Promise<number> {
    // A put cut off by a crash leaves its multipart upload open (and its parts billed). The bucket's
    // lifecycle rule AbortIncompleteMultipartUpload (deploy/README.md) is the store's own remedy;
    // this sweeps them sooner. One still receiving parts has a part newer than `before`.
    if (this.multipartListingUnsupported) return 0;
    let removed = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListMultipartUploadsCommand({
            Bucket: this.bucket,
            ...(keyMarker !== undefined ? { KeyMarker: keyMarker } : {}),
            ...(uploadIdMarker !== undefined ? { UploadIdMarker: uploadIdMarker } : {}),
          }),
        );
      } catch (err) {
        if (!isNotImplemented(err)) throw err;
        this.multipartListingUnsupported = true;
        return removed;
      }
      for (const upload of page.Uploads ?? []) {
        if (upload.Key === undefined || upload.UploadId === undefined) continue;
        if ((upload.Initiated?.getTime() ?? 0) >= before) continue;
        if ((await this.lastPartAt(upload.Key, upload.UploadId)) >= before) continue;
        await this.client.send(
          new AbortMultipartUploadCommand({
            Bucket: this.bucket,
            Key: upload.Key,
            UploadId: upload.UploadId,
          }),
        );
        removed++;
      }
      keyMarker = page.IsTruncated === true ? page.NextKeyMarker : undefined;
      uploadIdMarker = page.IsTruncated === true ? page.NextUploadIdMarker : undefined;
    } while (keyMarker !== undefined);
    return removed;
  }

  /** When the upload last received a part (epoch ms; 0 without parts). */
  private async lastPartAt(key: string, uploadId: string): Promise<number> {
    let latest = 0;
    let marker: string | undefined;
    do {
      const res = await this.client.send(
        new ListPartsCommand({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          ...(marker !== undefined ? { PartNumberMarker: marker } : {}),
        }),
      );
      for (const part of res.Parts ?? []) latest = Math.max(latest, part.LastModified?.getTime() ?? 0);
      marker = res.IsTruncated === true ? res.NextPartNumberMarker : undefined;
    } while (marker !== undefined);
    return latest;
  }

  async deletePrefix(prefix: string): Promise<void> {
    checkPrefix(prefix);
    const keys = (await this.list(prefix)).map((o) => o.key);
    for (let i = 0; i < keys.length; i += DELETE_BATCH) {
      const batch = keys.slice(i, i + DELETE_BATCH);
      if (!this.batchDeleteUnsupported) {
        try {
          const res = await this.client.send(
            new DeleteObjectsCommand({
              Bucket: this.bucket,
              Delete: { Objects: batch.map((Key) => ({ Key })), Quiet: true },
            }),
          );
          const failed = (res.Errors ?? []).filter((e) => e.Code !== 'NoSuchKey');
          if (failed.length > 0) {
            throw new Error(
              `could not delete ${failed.length} objects under ${prefix}: ${failed[0]?.Code ?? ''}`,
            );
          }
          continue;
        } catch (err) {
          if (!isNotImplemented(err)) throw err;
          this.batchDeleteUnsupported = true;
        }
      }
      for (const key of batch) await this.delete(key);
    }
  }

  async presignPut(key: string, options: { expiresInSeconds: number }): Promise<PresignedRequest> {
    checkKey(key);
    // Neither Content-Type nor Content-Length is signed: the client may send any accepted media
    // type (it decides the format, read back with HEAD), and a PUT cannot be held to a length it
    // does not declare up front. The size limit is applied when the upload is noticed (see
    // domain/jobs/arrivals.ts).
    const command = new PutObjectCommand({ Bucket: this.bucket, Key: key });
    return this.presign(command, options.expiresInSeconds);
  }

  async presignGet(key: string, options: { expiresInSeconds: number }): Promise<PresignedRequest> {
    checkKey(key);
    return this.presign(new GetObjectCommand({ Bucket: this.bucket, Key: key }), options.expiresInSeconds);
  }

  /** Closes the clients' connection pools. */
  destroy(): void {
    this.client.destroy();
    if (this.presigner !== this.client) this.presigner.destroy();
  }

  private async presign(
    command: PutObjectCommand | GetObjectCommand,
    expiresIn: number,
  ): Promise<PresignedRequest> {
    const expiresAt = new Date(Date.now() + expiresIn * 1000);
    return { url: await getSignedUrl(this.presigner, command, { expiresIn }), expiresAt };
  }
}

function isNotFound(err: unknown): boolean {
  return (
    err instanceof S3ServiceException &&
    (err.$metadata.httpStatusCode === 404 || err.name === 'NoSuchKey' || err.name === 'NotFound')
  );
}

function isNotImplemented(err: unknown): boolean {
  return (
    err instanceof S3ServiceException &&
    (err.$metadata.httpStatusCode === 501 || err.name === 'NotImplemented')
  );
}

// Keys are made by objectKeys; these checks keep a bug from ever naming the whole bucket.
function checkKey(key: string): void {
  if (key === '' || key.startsWith('/') || key.endsWith('/') || key.length > 1024) {
    throw new Error(`invalid object key ${JSON.stringify(key)}`);
  }
}

function checkPrefix(prefix: string): void {
  if (prefix === '' || prefix === '/' || !prefix.endsWith('/') || prefix.startsWith('/')) {
    throw new Error(`invalid object prefix ${JSON.stringify(prefix)}`);
  }
}
