// Loading a file into a dataset from the console: a `multipart/form-data` form on the dataset's
// page, streamed (never buffered) by @fastify/multipart into the same object store key, through
// the same receiver, as a file PUT to the API's upload URL: the console creates the same uploadUrl
// job (createUploadJob, which the API's requestUploadUrl calls too) for the workspace member,
// hands the file to receiveUpload, and sends the browser to the load's page, which refreshes itself
// while the load runs. docs/console.md ("Loading a file") says why it is built this way.
//
// The CSRF token travels in the form's first field: the scope's preHandler cannot read a body
// that is still streaming, so this route is exempt there (`config.csrfInBody`) and checks the
// token here before one byte of the file is stored.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile } from '@fastify/multipart';
import { problem, ProblemError } from '../../../errors.js';
import type { ApiDeps } from '../../deps.js';
import type { ConsoleDb } from '../../../domain/console/db.js';
import { audit } from '../../../domain/console/audit.js';
import { workspaceReader } from '../../../domain/datasets/datasets.js';
import { requireChange } from '../../../domain/console/access.js';
import { csrfTokenMatches } from '../../../domain/console/sessions.js';
import { createUploadJob } from '../../../domain/jobs/requests.js';
import { receiveUpload } from '../../../domain/jobs/receive-upload.js';
import { newUploadClaim } from '../../../domain/jobs/uploads.js';
import { transitionJob } from '../../../domain/jobs/jobs.js';
import { fileTooLargeMessage } from '../../../domain/jobs/upload-headers.js';
import { DEFAULT_LOAD_OPTIONS } from '../../../domain/jobs/load-options.js';
import {
  CONTENT_TYPES,
  LOAD_MODES,
  NO_DEFECTS,
  type ContentType,
  type LoadMode,
} from '../../../domain/jobs/status.js';
import { objectKeys } from '../../../storage/objects/index.js';
import { consoleState } from './context.js';
import { accessOf, idParam } from './datasets.js';

/** Bytes a multipart body may carry besides the file: the other fields, boundaries, part headers. */
export const MULTIPART_OVERHEAD_BYTES = 64 * 1024;
/** The longest file name kept (in the load's first status entry and the audit log). */
const FILE_NAME_MAX = 200;

/** The route's config flag that moves its CSRF check from the scope's preHandler to the handler. */
export interface CsrfInBody {
  csrfInBody?: boolean;
}

/** The file's name as the browser sent it, without control characters and cut to FILE_NAME_MAX. */
export function cleanFileName(name: string): string {
  // eslint-disable-next-line no-control-regex
  const clean = name.replace(/[\u0000-\u001f\u007f-\u009f]/g, '').trim();
  return clean.length > FILE_NAME_MAX ? `${clean.slice(0, FILE_NAME_MAX - 1)}…` : clean;
}

/** The form's fields before its file, as sent. */
interface UploadFields {
  csrf: unknown;
  mode: string;
  format: string;
}

/** POST /console/workspaces/:workspaceId/datasets/:datasetId/upload. */
export function consoleUploadRoutes(scope: FastifyInstance, deps: ApiDeps, db: ConsoleDb): void {
  const maxBytes = deps.config.uploadMaxBytes;
  scope.post(
    '/workspaces/:workspaceId/datasets/:datasetId/upload',
    { config: { csrfInBody: true } satisfies CsrfInBody },
    async (request, reply) => {
      const { access, actor } = await accessOf(db, request);
      const datasetId = idParam(request.params, 'datasetId', 'dataset');
      if (!request.isMultipart())
        throw problem(
          'invalid',
          'The file was not sent as a file form. Go back, reload the page and try again.',
        );
      // Refused before a byte is read when the whole body declares more than a file may be.
      const declared = Number(request.headers['content-length'] ?? NaN);
      if (Number.isFinite(declared) && declared > maxBytes + MULTIPART_OVERHEAD_BYTES) {
        closeAfterAnswer(request, reply);
        throw tooLarge(maxBytes);
      }
      const fields: UploadFields = { csrf: undefined, mode: '', format: '' };
      const parts = request.parts({
        limits: { fileSize: maxBytes + 1, files: 1, fields: 8, fieldSize: 1024, parts: 10 },
      });
      try {
        for await (const part of parts) {
          if (part.type === 'field') {
            readField(fields, part);
            continue;
          }
          // The file: everything it needs came before it (the form puts it last).
          if (!csrfTokenMatches(deps.signingSecret, consoleState(request).binding, fields.csrf))
            throw problem(
              'forbidden',
              'This form has expired or did not come from this console. Go back, reload the page and try again.',
            );
          requireChange(access);
          const jobId = await receiveFile(part, fields);
          return reply.redirect(`/console/workspaces/${access.workspaceId}/jobs/${jobId}`, 303);
        }
      } catch (err) {
        // A refusal while the body still streams: the answer closes the connection (the rest of a
        // large file is not worth reading to throw away).
        closeAfterAnswer(request, reply);
        throw mapped(err, maxBytes);
      }
      // No file part: the CSRF check still comes first.
      if (!csrfTokenMatches(deps.signingSecret, consoleState(request).binding, fields.csrf))
        throw problem(
          'forbidden',
          'This form has expired or did not come from this console. Go back, reload the page and try again.',
        );
      throw problem('invalid', 'Choose a file to load.');

      async function receiveFile(part: MultipartFile, sent: UploadFields): Promise<string> {
        const mode = choice(LOAD_MODES, sent.mode, 'load mode');
        const format = choice(CONTENT_TYPES, sent.format, 'file format');
        const fileName = cleanFileName(part.filename);
        if (fileName === '') throw problem('invalid', 'Choose a file to load.');
        // The job names the workspace's owner as its creator, as an installation's loads do (the
        // API's `createdBy`); who pressed the button is in the audit log.
        const owner = await deps.db
          .selectFrom('workspaces')
          .select('owner_user_id')
          .where('id', '=', access.workspaceId)
          .executeTakeFirstOrThrow();
        const caller = {
          ...workspaceReader(access.workspaceId),
          ownerUserId: owner.owner_user_id,
          requestId: String(request.id),
        };
        const created = await createUploadJob(deps.db, caller, {
          datasetId,
          mode,
          options: DEFAULT_LOAD_OPTIONS,
          contentType: format,
          uploadType: 'singlerequest',
          message: `Uploading ${fileName} from the console.`,
        });
        const claim = newUploadClaim();
        let bytes: number;
        try {
          const answer = await receiveUpload(
            { db: deps.db, objects: deps.objects, maxBytes },
            {
              jobId: created.jobId,
              urlExpired: false,
              // The form's format decides, whatever type the browser guessed for the file.
              contentType: undefined,
              contentRange: undefined,
              contentLength: null,
              body: part.file,
              claim,
            },
          );
          if (answer.status !== 200) throw new Error('a whole-file upload was answered as a slice');
          bytes = answer.body.bytes;
        } catch (err) {
          await refuseLoad(deps, request, created, mapped(err, maxBytes), fileName);
          throw err;
        }
        deps.notifier.notify();
        await audit(db, actor, 'dataset.file_loaded', {
          workspaceId: access.workspaceId,
          detail: loadDetail(fileName, bytes, mode, format, created),
        });
        return created.jobId;
      }
    },
  );
}

/** The audit row's detail of a load from the console; `load JOBID` ends it (origins.ts reads it). */
export function loadDetail(
  fileName: string,
  bytes: number,
  mode: LoadMode,
  format: ContentType,
  job: { datasetId: string; jobId: string },
): string {
  return `${fileName} (${bytes} bytes, ${format}, mode ${mode}) into dataset ${job.datasetId}, load ${job.jobId}`;
}

function readField(fields: UploadFields, part: Multipart & { type: 'field' }): void {
  const value = typeof part.value === 'string' ? part.value : '';
  if (part.fieldname === '_csrf') fields.csrf = value;
  else if (part.fieldname === 'mode') fields.mode = value;
  else if (part.fieldname === 'format') fields.format = value;
}

function choice<T extends string>(set: readonly T[], value: string, what: string): T {
  if ((set as readonly string[]).includes(value)) return value as T;
  throw problem('invalid', `Choose a ${what}: one of ${set.join(', ')}.`);
}

function tooLarge(maxBytes: number): ProblemError {
  return problem('tooLarge', fileTooLargeMessage(maxBytes), { code: 'file_too_large' });
}

/** A multipart limit (the file's size, too many parts) as the problem the page shows. */
function mapped(err: unknown, maxBytes: number): unknown {
  if (err instanceof ProblemError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge(maxBytes);
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FILES_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return problem('invalid', 'The form carried more than one file and its three fields.');
  return err;
}

function closeAfterAnswer(request: FastifyRequest, reply: FastifyReply): void {
  if (!request.raw.complete) void reply.header('connection', 'close');
}

/** A file the upload could not take ends its load Failed at once (not Expired an hour later),
 * with the reason, and nothing of it is kept. */
async function refuseLoad(
  deps: ApiDeps,
  request: FastifyRequest,
  job: { datasetId: string; jobId: string },
  err: unknown,
  fileName: string,
): Promise<void> {
  const reason =
    err instanceof ProblemError ? err.detail : 'the file did not arrive whole (the connection ended early)';
  try {
    const refused = await transitionJob(
      deps.db,
      { id: job.jobId },
      {
        move: 'fileRefused',
        by: { kind: 'service' },
        log: { message: `The file ${fileName} from the console was not loaded: ${reason}` },
        error: NO_DEFECTS,
      },
    );
    // Only a load this ended loses its file (one already queued keeps it).
    if (refused !== undefined) await deps.objects.delete(objectKeys.upload(job.datasetId, job.jobId));
  } catch (cleanup) {
    // The hourly expiry ends the job and deletes the file if this could not.
    request.log.warn({ err: cleanup, jobId: job.jobId }, 'console upload: ending the refused load failed');
  }
}
