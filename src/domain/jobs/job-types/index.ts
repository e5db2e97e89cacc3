// The job types: one module each, so a type added to JOB_TYPES does not compile until it has one.
import type { JobType } from '../status.js';
import type { JobTypeModule } from './job-type.js';
import { recordsLoadJob } from './records-load.js';
import { uploadJob } from './upload.js';

export type { JobSource, JobTypeContext, JobTypeModule } from './job-type.js';

export const JOB_TYPE_MODULES: Record<JobType, JobTypeModule> = {
  uploadUrl: uploadJob,
  recordsLoad: recordsLoadJob,
};
