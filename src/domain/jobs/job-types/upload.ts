// Job type `uploadUrl`: the file was PUT to an upload URL and sits in the object store, whole under
// the job's object key, or (a resumable session) as consecutive slices read back in order.
import { Readable } from 'node:stream';
import type { DatasetJobRow } from '../../../storage/db/tables.js';
import { objectKeys, ObjectNotFound, type ObjectStore } from '../../../storage/objects/index.js';
import { JobFailure } from '../load/failure.js';
import { asUploadType } from '../status.js';
import { deleteUploadedFile } from '../uploads.js';
import type { JobTypeModule } from './job-type.js';

/** Reads the uploaded file; deletes it once the job has ended. */
export const uploadJob: JobTypeModule = {
  async open({ job, objects }) {
    // Always set for an upload; a missing one leaves the format to the parser's sniffing.
    const format = job.content_type ?? 'auto';
    if (asUploadType(job.upload_type) === 'resumable') {
      return { body: await sliceStream(objects, job), format, size: Number(job.upload_total) };
    }
    if (job.object_key === null) throw new JobFailure('The job has no uploaded file.');
    try {
      // The size first: a stored file's progress always has its total (docs/loading.md).
      const info = await objects.head(job.object_key);
      if (info === null) throw new ObjectNotFound(job.object_key);
      return { body: await objects.get(job.object_key), format, size: info.size };
    } catch (err) {
      if (err instanceof ObjectNotFound) throw new JobFailure('The uploaded file is gone.');
      throw err;
    }
  },
  async cleanup({ job, objects }) {
    await deleteUploadedFile(objects, job);
  },
};

/** The slices of a resumable session as one stream, after checking they cover the file exactly. */
async function sliceStream(objects: ObjectStore, job: DatasetJobRow): Promise<Readable> {
  const total = Number(job.upload_total ?? -1);
  const slices = await objects.list(objectKeys.uploadSlices(job.dataset_id, job.id));
  let next = 0;
  const keys: string[] = [];
  for (const slice of slices) {
    const start = Number(slice.key.slice(slice.key.lastIndexOf('/') + 1));
    // A slice beyond the persisted prefix is one whose store outran a crash: never part of the file.
    if (start >= total) continue;
    if (start !== next)
      throw new JobFailure(`The uploaded file is incomplete (bytes from ${next} are missing).`);
    keys.push(slice.key);
    next += slice.size;
  }
  if (next !== total) throw new JobFailure(`The uploaded file is incomplete (${next} of ${total} bytes).`);
  // One stream pulled slice after slice (backpressure and errors as for a single object). Piping
  // each slice into one PassThrough with `end: false` left listeners on it per slice.
  return Readable.from(concatenated(objects, keys), { objectMode: false });
}

async function* concatenated(objects: ObjectStore, keys: readonly string[]): AsyncGenerator<Buffer> {
  for (const key of keys) yield* (await objects.get(key)) as AsyncIterable<Buffer>;
}
