// The parse-and-validate stage of record loading: what the loading job needs from it.
export type { CellValue } from './cells.js';
export type { ParsedBatch, ParseStats, RecordFields } from './context.js';
export { ErrorCollector, MAX_KEPT_ERRORS, type CollectedError, type LoadError } from './errors.js';
export { DEFAULT_BATCH_SIZE, parseRecords, type InputFormat, type ParseOptions } from './parse.js';
export { InputFailure } from './input.js';
export type { InvalidUtf8 } from './text.js';
