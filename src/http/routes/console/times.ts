// Instants as the console shows them: UTC to the second, in a <time> element that carries the
// instant for machines (a browser extension, a script reading the page) and never wraps in a table.
import { html, type SafeHtml } from './html.js';

/** The service's timestamps (`2024-08-21T23:16:34.230069`: UTC, no zone) or a Date; '' for none. */
export function when(instant: string | Date | null): SafeHtml | '' {
  if (instant === null) return '';
  const seconds = (typeof instant === 'string' ? instant : instant.toISOString()).slice(0, 19);
  return html`<time datetime="${seconds}Z">${seconds.replace('T', ' ')} UTC</time>`;
}
