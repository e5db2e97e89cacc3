// The console's lists that page in name order and are searched by name (domain/lists/by-name.ts):
// `?q=` is the search, `?after=` an opaque token of where the page starts (made by the list's own
// Next link); what each page shows of them, the search form and the pager.
import { problem } from '../../../errors.js';
import type { NamePageQuery, NamePosition } from '../../../domain/lists/by-name.js';
import { html, type SafeHtml } from './html.js';

/** The longest search a list takes (names are at most as long). */
const MAX_SEARCH_CHARS = 200;

/** How a request asks for a page of a list, and what it searched for ('' when nothing). */
export function namePageQuery(query: unknown, limit: number): { search: string; query: NamePageQuery } {
  const { q, after } = query as { q?: unknown; after?: unknown };
  const search = typeof q === 'string' ? q.trim().slice(0, MAX_SEARCH_CHARS) : '';
  return {
    search,
    query: {
      nameContains: search,
      after: typeof after === 'string' && after !== '' ? positionOf(after) : null,
      limit,
    },
  };
}

/** The `after` token of a position. */
export const afterToken = (at: NamePosition): string =>
  Buffer.from(JSON.stringify([at.name, at.id])).toString('base64url');

function positionOf(token: string): NamePosition {
  try {
    const [name, id] = JSON.parse(Buffer.from(token, 'base64url').toString()) as unknown[];
    if (typeof name === 'string' && (typeof id === 'string' || typeof id === 'number')) return { name, id };
  } catch {
    // Falls through to the 400 below.
  }
  throw problem('invalid', 'This link to a page of the list is not valid: start again from its first page.');
}

/** A page of a list as its page shows it: the items, whether it is a later page, the search. */
export interface NameListPage {
  /** The list's address, without a query. */
  href: string;
  search: string;
  /** Whether this is a later page than the first. */
  later: boolean;
  next: NamePosition | null;
  /** How many items this page shows. */
  shown: number;
}

/** The search form of a list (`by`: what the search reads), and what it found when there was one. */
export function nameSearch(list: NameListPage, things: string, by = 'name'): SafeHtml {
  const found = list.shown > 0 || list.later;
  return html`<form method="get" action="${list.href}" role="search">
      <label for="q">Find ${things} by ${by}</label>
      <input id="q" name="q" type="search" maxlength="${MAX_SEARCH_CHARS}" value="${list.search}" />
      <button type="submit" class="secondary">Find</button>
    </form>
    ${
      list.search !== ''
        ? html`<p id="search-result">
            ${found ? `The ${things}` : `No ${things}`} whose ${by} holds “${list.search}”${found ? ':' : '.'}
            <a href="${list.href}">Show them all</a>
          </p>`
        : ''
    }`;
}

/** The links to a list's first page and to its next one, where there are such pages. */
export function namePager(list: NameListPage, things: string): SafeHtml | '' {
  if (!list.later && list.next === null) return '';
  const searched = list.search !== '' ? `q=${encodeURIComponent(list.search)}` : '';
  const first = `${list.href}${searched !== '' ? `?${searched}` : ''}`;
  const next =
    list.next !== null
      ? `${list.href}?${searched !== '' ? `${searched}&` : ''}after=${afterToken(list.next)}`
      : null;
  const firstLink = html`<a href="${first}">First ${things}</a>`;
  const nextLink = html`<a href="${next}" rel="next">Next ${things}</a>`;
  return html`<p class="pager">${list.later ? firstLink : ''} ${next !== null ? nextLink : ''}</p>`;
}
