// Collects the defects found while loading a file. Every defect is counted and handed on in
// batches (the load job stores them all), bad records are counted apart from defects (one record
// may have several), and the first 100 stay in memory for callers without a store.
import { storableText } from './text.js';

/** One defect in a loaded file: the line where its record starts and, when known, the property. */
export interface LoadError {
  line: number;
  property?: string;
  message: string;
}

/** A defect as handed on to be stored: its place in the order found and its record's text. */
export interface CollectedError extends LoadError {
  /** 1, 2, 3 … in the order the defects were found. */
  seq: number;
  /**
   * The record's text as the parser saw it (at most {@link MAX_ORIGINAL_TEXT_CHARS}); `null` on
   * the second and later defects of one record (the text is on its first), '' when not known.
   */
  originalText: string | null;
}

/** How many errors are kept in memory; all are counted and handed on through {@link ErrorCollector.take}. */
export const MAX_KEPT_ERRORS = 100;

/** The longest original text kept of a bad record; a longer one is cut (an unclosed quote can
 * make a record megabytes long, and the text is only there to help find and fix the row). */
export const MAX_ORIGINAL_TEXT_CHARS = 4096;

/** Defects waiting to be taken before the parse hands out its next batch, even an empty one:
 * with this, memory stays flat when every record of a huge file is bad. */
export const ERROR_BACKLOG_LIMIT = 1000;

/** Counts defects and bad records, keeps the first {@link MAX_KEPT_ERRORS}, queues all for storing. */
export class ErrorCollector {
  /** Defects found: row errors and file errors. */
  count = 0;
  /** Records with at least one defect (left out of the load). */
  rowsRejected = 0;
  /** Defects of the file as a whole (its header, its structure): no record can be trusted then. */
  fileErrors = 0;
  readonly errors: LoadError[] = [];
  private pending: CollectedError[] = [];
  private lastRecord: number | undefined;

  /**
   * Records a defect of one record. `originalText` is the record as the parser saw it;
   * `record` (its ordinal in the file) groups the defects of one record so it counts as one bad
   * row: pass it when a record can have several defects; left out, each call is a bad row.
   */
  add(error: LoadError, originalText?: string, record?: number): void {
    const sameRecord = record !== undefined && record === this.lastRecord;
    this.lastRecord = record;
    if (!sameRecord) this.rowsRejected++;
    const text = sameRecord ? null : (originalText ?? '').slice(0, MAX_ORIGINAL_TEXT_CHARS);
    this.collect(error, text);
  }

  /** Records a defect of the file itself (the header, an unclosed array): the load cannot go on. */
  addFileError(error: LoadError): void {
    this.fileErrors++;
    this.lastRecord = undefined;
    this.collect(error, '');
  }

  /** The number of defects waiting to be taken. */
  get backlog(): number {
    return this.pending.length;
  }

  /** Hands out the defects collected since the last call, in the order found. */
  take(): CollectedError[] {
    const taken = this.pending;
    this.pending = [];
    return taken;
  }

  private collect(raw: LoadError, text: string | null): void {
    // A defect's own text may hold what made it one (a NUL, invalid bytes): it must still be stored.
    const message = storableText(raw.message);
    const property = raw.property === undefined ? undefined : storableText(raw.property);
    const error =
      message === raw.message && property === raw.property
        ? raw
        : property === undefined
          ? { line: raw.line, message }
          : { line: raw.line, property, message };
    const originalText = text === null ? null : storableText(text);
    this.count++;
    if (this.errors.length < MAX_KEPT_ERRORS) this.errors.push(error);
    this.pending.push({ ...error, seq: this.count, originalText });
  }
}
