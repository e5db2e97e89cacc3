// Picks the object store the configuration asks for: files under DATA_DIR, or an S3-compatible bucket.
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { LocalObjectStore } from './local.js';
import type { ObjectStore } from './object-store.js';
import { S3ObjectStore } from './s3.js';

export * from './object-store.js';

/** The object store of this configuration (STORAGE=local: DATA_DIR/objects; STORAGE=s3: S3_BUCKET). */
export function createObjectStore(config: Pick<Config, 'dataDir' | 'storage'>): ObjectStore {
  const storage = config.storage;
  switch (storage.kind) {
    case 'local':
      return new LocalObjectStore(join(config.dataDir, 'objects'));
    case 's3':
      return new S3ObjectStore(storage.s3);
  }
}
