// Picks the object store the configuration asks for: files under DATA_DIR, or an S3-compatible bucket.
import { join } from 'node:path';
import type { Config } from '../../config.js';
import { LocalObjectStore } from './local.js';
import type { ObjectStore } from './object-store.js';

export * from './object-store.js';

/**
 * The object store of this configuration (STORAGE=local: DATA_DIR/objects; STORAGE=s3: S3_BUCKET).
 * The AWS SDK is loaded only for S3: a service on local files does not hold its code in memory.
 */
export async function createObjectStore(config: Pick<Config, 'dataDir' | 'storage'>): Promise<ObjectStore> {
  const storage = config.storage;
  switch (storage.kind) {
    case 'local':
      return new LocalObjectStore(join(config.dataDir, 'objects'));
    case 's3': {
      const { S3ObjectStore } = await import('./s3.js');
      return new S3ObjectStore(storage.s3);
    }
  }
}
