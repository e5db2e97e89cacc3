// The object store seam: where uploaded files and exports live. `local` keeps them under DATA_DIR;
// an S3-compatible store (a later issue) plugs in behind the same interface with presigned URLs.
import type { Readable } from 'node:stream';

/** What is known about a stored object. */
export interface ObjectInfo {
  key: string;
  size: number;
  lastModified: Date;
  /** The Content-Type it was stored with, where the store keeps one (S3). */
  contentType?: string;
}

export interface PutOptions {
  contentType: string;
  /** The put fails with ObjectTooLarge once the stream passes this many bytes. */
  maxBytes: number;
  signal?: AbortSignal;
}

/** A presigned request the caller makes directly against the store (S3-style). */
export interface PresignedRequest {
  url: string;
  expiresAt: Date;
}

/** Keys are `/`-separated relative paths: `datasets/<datasetId>/uploads/<jobId>`. */
export interface ObjectStore {
  /** Stores the stream under `key` atomically: readers see the whole object or none. */
  put(key: string, body: Readable, options: PutOptions): Promise<ObjectInfo>;
  /** Streams the object; rejects with ObjectNotFound when it is absent. */
  get(key: string): Promise<Readable>;
  head(key: string): Promise<ObjectInfo | null>;
  delete(key: string): Promise<void>;
  /** Every object whose key starts with `prefix` (a folder, ending in `/`). */
  list(prefix: string): Promise<ObjectInfo[]>;
  deletePrefix(prefix: string): Promise<void>;
  /**
   * Removes what puts interrupted by a crash left behind, when they have made no progress since
   * `before` (epoch ms): partial files (local), unfinished multipart uploads (S3). Returns how many.
   */
  removeAbandonedPuts(before: number): Promise<number>;
  /**
   * Set when clients upload and download through the store's own presigned URLs (S3 with
   * S3_TRANSFERS=direct); null when the service's signed URLs carry the bytes.
   */
  readonly presigned: PresignedTransfers | null;
}

/** URLs a client uses against the store directly, bypassing the service. */
export interface PresignedTransfers {
  put(key: string, options: { expiresInSeconds: number }): Promise<PresignedRequest>;
  get(key: string, options: { expiresInSeconds: number }): Promise<PresignedRequest>;
}

/** The object is absent. */
export class ObjectNotFound extends Error {
  constructor(readonly key: string) {
    super(`object ${key} not found`);
  }
}

/** The stream was longer than the put's maxBytes. */
export class ObjectTooLarge extends Error {
  constructor(readonly maxBytes: number) {
    super(`the file is larger than the limit of ${maxBytes} bytes`);
  }
}

/** Object keys of a dataset, in one place so cleanup finds everything. */
export const objectKeys = {
  dataset: (datasetId: string) => `datasets/${datasetId}/`,
  upload: (datasetId: string, jobId: string) => `datasets/${datasetId}/uploads/${jobId}`,
  /** The slices a resumable upload session persisted, one object each. */
  uploadSlices: (datasetId: string, jobId: string) => `datasets/${datasetId}/uploads/${jobId}.slices/`,
  /** The slice that starts at byte `start`; zero-padded so keys sort in file order. */
  uploadSlice: (datasetId: string, jobId: string, start: number) =>
    `datasets/${datasetId}/uploads/${jobId}.slices/${String(start).padStart(15, '0')}`,
  exportsOf: (datasetId: string) => `datasets/${datasetId}/exports/`,
  export: (datasetId: string, generation: number, ext: 'csv' | 'ndjson') =>
    `datasets/${datasetId}/exports/${generation}.${ext}`,
};
