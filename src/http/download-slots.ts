// The exports a process streams at once (EXPORT_DOWNLOADS_MAX): each holds a database connection
// or a read transaction for as long as its client reads, so the API's signed downloads and the
// console's downloads share one count.
import { problem } from '../errors.js';

/** When a client told that every slot is taken may try again. */
const RETRY_AFTER_SECONDS = 5;

/** Hands out at most `max` slots at a time. */
export class DownloadSlots {
  private streaming = 0;

  constructor(private readonly max: number) {}

  /** A slot and its release (which does something the first time only), or null when all are taken. */
  take(): (() => void) | null {
    if (this.streaming >= this.max) return null;
    this.streaming++;
    let released = false;
    return () => {
      if (!released) this.streaming--;
      released = true;
    };
  }
}

/** A slot's release, or a 503 problem (with Retry-After) when every slot is taken. */
export function takeDownloadSlot(slots: DownloadSlots): () => void {
  const release = slots.take();
  if (release === null)
    throw problem('unavailable', 'This server is streaming as many downloads as it may; retry shortly.', {
      headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    });
  return release;
}
