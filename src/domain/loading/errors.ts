// Collects the defects found while loading a file: every one is counted, the first 100 are kept.

/** One defect in a loaded file: the line where its record starts and, when known, the property. */
export interface LoadError {
  line: number;
  property?: string;
  message: string;
}

/** How many errors are kept with a job; more are only counted, so a broken file cannot bloat memory. */
export const MAX_KEPT_ERRORS = 100;

/** Counts every error and keeps the first {@link MAX_KEPT_ERRORS} of them in file order. */
export class ErrorCollector {
  count = 0;
  readonly errors: LoadError[] = [];

  /** Records one error. */
  add(e: LoadError): void {
    this.count++;
    if (this.errors.length < MAX_KEPT_ERRORS) this.errors.push(e);
  }
}
