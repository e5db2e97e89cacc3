// Which object store holds uploads and exports, and the settings of the S3-compatible one. The
// variables are declared with the others in config.ts; how they combine is checked here. The stores
// themselves (src/storage/objects) take these settings and read no environment.
import { redactUrl } from '../lib/redact.js';

/** Object store backends: files under DATA_DIR, or an S3-compatible bucket. */
export const STORAGE_KINDS = ['local', 's3'] as const;
export type StorageKind = (typeof STORAGE_KINDS)[number];

/**
 * Who carries the bytes of uploads and downloads: the service (its own signed URLs, streamed to
 * and from the bucket; works with clients that attach their bearer token to every request, as
 * DXAPI clients do, which S3 refuses on a presigned URL) or the store (its presigned URLs).
 */
export const S3_TRANSFERS = ['service', 'direct'] as const;
export type S3Transfers = (typeof S3_TRANSFERS)[number];

/** Settings of the S3-compatible store (AWS S3, GCS interoperability, MinIO, R2). */
export interface S3Settings {
  bucket: string;
  region: string;
  /** API endpoint the service talks to; null means AWS S3's regional endpoint. */
  endpoint: string | null;
  /** Endpoint written into presigned URLs when clients reach the store by another address. */
  publicEndpoint: string | null;
  /** `https://host/bucket/key` instead of `https://bucket.host/key` (MinIO, most self-hosted stores). */
  forcePathStyle: boolean;
  transfers: S3Transfers;
  /** Shared secret of the bucket-notification webhook; null leaves the webhook off. */
  notificationToken: string | null;
  /** How often a worker HEADs the objects of jobs still awaiting their upload. */
  pollMs: number;
}

/** The object store of one configuration. */
export type StorageConfig = { kind: 'local' } | { kind: 's3'; s3: S3Settings };

/** The raw variables this module checks (already typed by config.ts). */
export interface StorageVars {
  STORAGE: StorageKind;
  S3_BUCKET: string;
  S3_REGION: string;
  S3_ENDPOINT: string;
  S3_PUBLIC_ENDPOINT: string;
  S3_FORCE_PATH_STYLE: boolean;
  S3_TRANSFERS: S3Transfers;
  S3_NOTIFICATION_TOKEN: string;
  S3_POLL_MS: number;
}

// S3's own rule for bucket names (lower case, digits, dots and hyphens, 3 to 63 characters).
const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Builds the storage configuration; pushes one message per mistake onto `problems`. */
export function readStorageConfig(v: StorageVars, problems: string[]): StorageConfig {
  if (v.STORAGE === 'local') {
    for (const name of ['S3_BUCKET', 'S3_ENDPOINT', 'S3_NOTIFICATION_TOKEN'] as const) {
      if (v[name] !== '') problems.push(`${name}: set, but STORAGE is local (set STORAGE=s3 to use it)`);
    }
    return { kind: 'local' };
  }
  if (v.S3_BUCKET === '') problems.push('S3_BUCKET: required when STORAGE=s3');
  else if (!BUCKET.test(v.S3_BUCKET)) {
    problems.push(`S3_BUCKET: not a valid bucket name (got ${JSON.stringify(v.S3_BUCKET)})`);
  }
  for (const name of ['S3_ENDPOINT', 'S3_PUBLIC_ENDPOINT'] as const) {
    if (v[name] !== '' && !isBareHttpUrl(v[name])) {
      problems.push(
        `${name}: must be an http(s) URL without credentials, path or query (got ${redactUrl(v[name])})`,
      );
    }
  }
  if (v.S3_NOTIFICATION_TOKEN !== '' && v.S3_NOTIFICATION_TOKEN.length < 32) {
    problems.push('S3_NOTIFICATION_TOKEN: must be at least 32 characters');
  }
  if (v.S3_NOTIFICATION_TOKEN !== '' && v.S3_TRANSFERS !== 'direct') {
    problems.push(
      'S3_NOTIFICATION_TOKEN: only used with S3_TRANSFERS=direct (with service transfers the service sees every upload itself)',
    );
  }
  return {
    kind: 's3',
    s3: {
      bucket: v.S3_BUCKET,
      region: v.S3_REGION,
      endpoint: v.S3_ENDPOINT === '' ? null : v.S3_ENDPOINT.replace(/\/+$/, ''),
      publicEndpoint: v.S3_PUBLIC_ENDPOINT === '' ? null : v.S3_PUBLIC_ENDPOINT.replace(/\/+$/, ''),
      forcePathStyle: v.S3_FORCE_PATH_STYLE,
      transfers: v.S3_TRANSFERS,
      notificationToken: v.S3_NOTIFICATION_TOKEN === '' ? null : v.S3_NOTIFICATION_TOKEN,
      pollMs: v.S3_POLL_MS,
    },
  };
}

function isBareHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return (
      (u.protocol === 'http:' || u.protocol === 'https:') &&
      u.username === '' &&
      u.password === '' &&
      (u.pathname === '/' || u.pathname === '') &&
      u.search === ''
    );
  } catch {
    return false;
  }
}
