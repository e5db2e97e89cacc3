// @dataset-exchange/client: a typed client of the Dataset Exchange Service API.
export { DxApp, type DxAppOptions, type InstallationOptions } from './app.js';
export {
  ChangeFeed,
  DxClient,
  CLIENT_VERSION,
  type DxClientOptions,
  type LoadOptions,
  type PageOptions,
  type RecordQuery,
  type UploadOptions,
  type UploadResult,
} from './client.js';
export { signAppJwt, MAX_APP_JWT_TTL_SECONDS, type AppJwtOptions, type PrivateKeyInput } from './app-jwt.js';
export { TokenCache, type CachedToken, type TokenCacheOptions } from './tokens.js';
export { DxProblemError, isDxProblem, type ErrorCode, type Problem } from './problem.js';
export {
  JobTimeoutError,
  isFinal,
  isUnavailable,
  resultOf,
  type JobResult,
  type WaitOptions,
} from './jobs.js';
export {
  formatOfName,
  MEDIA_TYPES,
  type UploadProgress,
  type UploadReceipt,
  type UploadSource,
} from './upload.js';
export { parseApiTimestamp, type FetchLike } from './http.js';
export type * from './types.js';
/** The generated types of the OpenAPI document, for generic clients (e.g. openapi-fetch). */
export type { paths, components, operations } from './generated/openapi.js';
