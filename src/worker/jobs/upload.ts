// Job type `uploadUrl`: the file was PUT to a signed URL and sits in the object store.
import { ObjectNotFound } from '../../storage/objects/index.js';
import { JobFailure } from '../failure.js';
import { formatOf, type JobTypeModule } from './job-type.js';

/** Reads the uploaded object; deletes it once the job has ended. */
export const uploadJob: JobTypeModule = {
  async open({ job, objects }) {
    if (job.object_key === null) throw new JobFailure('The job has no uploaded file.');
    try {
      return { body: await objects.get(job.object_key), format: formatOf(job.content_type) };
    } catch (err) {
      if (err instanceof ObjectNotFound) throw new JobFailure('The uploaded file is gone.');
      throw err;
    }
  },
  async cleanup({ job, objects }) {
    if (job.object_key !== null) await objects.delete(job.object_key);
  },
};
