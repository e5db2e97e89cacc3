// The shapes in which stores announce a new object, reduced to the object keys of one bucket:
// - S3 event notifications `{Records: [{s3: {bucket: {name}, object: {key}}}]}` (MinIO's webhook,
//   AWS S3 through SNS raw delivery or a relay, Ceph RGW); keys are URL-encoded there;
// - EventBridge "Object Created" events `{detail: {bucket: {name}, object: {key}}}` (AWS S3);
// - Pub/Sub push messages `{message: {attributes: {bucketId, objectId}}}` (GCS).

/** The distinct object keys in `body` that belong to `bucket`; unknown shapes yield none. */
export function objectKeysOfNotification(body: unknown, bucket: string): string[] {
  const keys = new Set<string>();
  const add = (bucketName: unknown, key: unknown, encoded: boolean) => {
    if (bucketName !== bucket || typeof key !== 'string' || key === '') return;
    const decoded = encoded ? decodeKey(key) : key;
    if (decoded !== null) keys.add(decoded);
  };
  const records = field(body, 'Records');
  if (Array.isArray(records)) {
    for (const record of records) {
      const s3 = field(record, 's3');
      add(field(field(s3, 'bucket'), 'name'), field(field(s3, 'object'), 'key'), true);
    }
  }
  const detail = field(body, 'detail');
  if (detail !== undefined) {
    add(field(field(detail, 'bucket'), 'name'), field(field(detail, 'object'), 'key'), true);
  }
  const attributes = field(field(body, 'message'), 'attributes');
  if (attributes !== undefined) add(field(attributes, 'bucketId'), field(attributes, 'objectId'), false);
  return [...keys];
}

function field(value: unknown, name: string): unknown {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  return (value as Record<string, unknown>)[name];
}

// S3 events encode keys as in an HTML form (space as '+').
function decodeKey(key: string): string | null {
  try {
    return decodeURIComponent(key.replace(/\+/g, ' '));
  } catch {
    return null;
  }
}
