// Checks of a page's accessibility and phone fit, run in the browser on the rendered page: what
// a person with a keyboard, a screen reader or a 375 px phone would run into. Not a full audit
// (axe does more); each rule is one the console promises in docs/console.md.
import type { Page } from 'playwright-core';

// Runs in the page (the test's tsconfig has no DOM types, so it is plain JavaScript).
const PAGE_CHECKS = `(() => {
  const problems = [];
  const root = document.documentElement;
  const describe = (el) =>
    el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + (el.className ? '.' + String(el.className).split(' ').join('.') : '');
  // Phone fit: the page itself never scrolls sideways (a wide table scrolls in its own box).
  if (root.scrollWidth > root.clientWidth) {
    const wide = [...document.querySelectorAll('body *')].filter((el) => {
      const r = el.getBoundingClientRect();
      if (r.right <= root.clientWidth + 0.5) return false;
      // Inside a scrolling box it is harmless, unless it is positioned out of the box's reach.
      const escapes = ['absolute', 'fixed'].includes(getComputedStyle(el).position);
      for (let p = el.parentElement; p && !escapes; p = p.parentElement)
        if (['auto', 'scroll', 'hidden'].includes(getComputedStyle(p).overflowX)) return false;
      return true;
    });
    problems.push('scrolls sideways: ' + root.scrollWidth + ' > ' + root.clientWidth + ' px, widest: ' +
      wide.slice(-3).map(describe).join(', '));
  }
  // Every form control has an accessible name from a label (or aria-label/-labelledby).
  for (const el of document.querySelectorAll('input, select, textarea')) {
    if (el.type === 'hidden') continue;
    const labelled = [...(el.labels || [])].some((l) => l.textContent.trim() !== '') ||
      (el.getAttribute('aria-label') || '').trim() !== '' || el.hasAttribute('aria-labelledby');
    if (!labelled) problems.push('control without a label: ' + describe(el));
  }
  for (const el of document.querySelectorAll('button, a[href]'))
    if ((el.textContent || '').trim() === '' && !el.getAttribute('aria-label'))
      problems.push('nameless ' + describe(el));
  // Landmarks and headings: one main, one h1, no level skipped going down.
  if (document.querySelectorAll('main').length !== 1) problems.push('not exactly one <main>');
  const headings = [...document.querySelectorAll('h1, h2, h3, h4, h5, h6')].map((h) => Number(h.tagName[1]));
  if (headings.filter((l) => l === 1).length !== 1) problems.push('not exactly one h1: ' + headings.join(','));
  headings.forEach((level, i) => {
    if (i > 0 && level > headings[i - 1] + 1) problems.push('heading level skipped: h' + headings[i - 1] + ' to h' + level);
  });
  for (const th of document.querySelectorAll('th'))
    if (!th.getAttribute('scope')) problems.push('<th> without scope: ' + th.textContent.trim());
  for (const img of document.querySelectorAll('img'))
    if (!img.hasAttribute('alt')) problems.push('<img> without alt');
  // On a desktop screen (1280 px and up) every table fits its column: none hides a column behind
  // its box's scrolling.
  if (window.innerWidth >= 1280)
    for (const box of document.querySelectorAll('.table-wrap'))
      if (box.scrollWidth > box.clientWidth + 1)
        problems.push('a table wider than its column at ' + window.innerWidth + ' px: ' + box.scrollWidth +
          ' > ' + box.clientWidth + ' px, headed ' + [...box.querySelectorAll('th')].map((th) => th.textContent.trim()).join(' | '));
  // Navigation: whoever is signed in has the console's sections on every page; a page below a
  // section's first page has the trail of the pages above it, ending in itself (no link).
  if (document.querySelector('form[action="/console/sign-out"]')) {
    const sections = document.querySelector('header nav[aria-label="Console"]');
    const to = (href) => sections && sections.querySelector('a[href="' + href + '"]');
    if (!to('/console/home') || !to('/console/account')) problems.push('no navigation bar with Workspaces and Your account');
  }
  const trail = document.querySelector('nav[aria-label="Breadcrumb"]');
  if (/^\\/console\\/(workspaces|operator)\\/./.test(location.pathname) && !trail)
    problems.push('no breadcrumb trail below the first page of a section');
  if (trail) {
    const items = [...trail.querySelectorAll('li')];
    const last = items[items.length - 1];
    if (items.length < 2 || !last || last.getAttribute('aria-current') !== 'page' || last.querySelector('a'))
      problems.push('a breadcrumb trail that does not end in the page itself');
    if (items.slice(0, -1).some((li) => !li.querySelector('a[href]'))) problems.push('a breadcrumb step without its link');
  }
  if (!root.getAttribute('lang')) problems.push('<html> without lang');
  if (document.title.trim() === '') problems.push('no <title>');
  return problems;
})()`;

/** What is wrong with the page as it is rendered now; empty when nothing is. */
export async function pageProblems(page: Page): Promise<string[]> {
  // Asked right after a click that navigates, the page may be between documents (a CI run met
  // `document.documentElement` null): check the new one once it has loaded.
  await page.waitForLoadState();
  return page.evaluate<string[]>(PAGE_CHECKS);
}

/** The element that has focus, with what a keyboard user would see of it. */
export interface Focused {
  tag: string;
  text: string;
  href: string | null;
  outlineStyle: string;
  outlineWidth: number;
  /** Whether it is inside the viewport (a skip link must come into view when focused). */
  inView: boolean;
}

const FOCUSED = `(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return null;
  const s = getComputedStyle(el);
  const r = el.getBoundingClientRect();
  return {
    tag: el.tagName.toLowerCase(),
    text: (el.textContent || el.getAttribute('aria-label') || el.name || '').trim(),
    href: el.getAttribute('href'),
    outlineStyle: s.outlineStyle,
    outlineWidth: parseFloat(s.outlineWidth) || 0,
    inView: r.width > 0 && r.height > 0 && r.left >= 0 && r.top >= 0 && r.right <= innerWidth && r.bottom <= innerHeight,
  };
})()`;

export async function focused(page: Page): Promise<Focused | null> {
  return page.evaluate<Focused | null>(FOCUSED);
}

/**
 * Presses Tab from the top of a freshly loaded page until focus leaves the page (or `max` stops);
 * returns every element that received focus, in order, as the keyboard user met it.
 */
export async function tabStops(page: Page, max = 40): Promise<Focused[]> {
  const stops: Focused[] = [];
  for (let i = 0; i < max; i++) {
    await page.keyboard.press('Tab');
    const f = await focused(page);
    if (f === null) break;
    if (stops.length > 0 && JSON.stringify(stops[0]) === JSON.stringify(f)) break;
    stops.push(f);
  }
  return stops;
}

/** A page the crawl opened, and what the page checks found on it. */
export interface Crawled {
  url: string;
  status: number;
  problems: string[];
}

/** The kind of page a URL is (ids replaced), so a crawl opens a few of each kind, not all. */
export function pageKind(url: URL): string {
  return url.pathname.replace(/[0-9a-f]{8}-[0-9a-f-]{27,}/gi, ':uuid').replace(/\/\d+(?=\/|$)/g, '/:id');
}

const LINKS = `[...document.querySelectorAll('a[href]')]
  .filter((a) => !a.hasAttribute('download'))
  .map((a) => a.href)`;

/**
 * Follows every console link reachable from `start` in this page's session, breadth first (GET
 * only: forms are never submitted, sign-out is a form), opening at most `perKind` pages of each
 * kind and `max` in all, and runs the page checks on each. Pages added later are covered as soon
 * as something links to them.
 */
export async function crawl(
  page: Page,
  start: string,
  opts: { perKind?: number; max?: number; skip?: RegExp } = {},
): Promise<Crawled[]> {
  const perKind = opts.perKind ?? 2;
  const max = opts.max ?? 60;
  const queue = [start];
  const seen = new Set<string>([start]);
  const kinds = new Map<string, number>();
  const out: Crawled[] = [];
  while (queue.length > 0 && out.length < max) {
    const next = queue.shift()!;
    const res = await page.goto(next);
    const url = new URL(page.url());
    out.push({
      url: url.pathname + url.search,
      status: res?.status() ?? 0,
      problems: await pageProblems(page),
    });
    for (const href of await page.evaluate<string[]>(LINKS)) {
      const link = new URL(href);
      link.hash = '';
      const key = link.pathname + link.search;
      if (link.origin !== url.origin) continue;
      if (!link.pathname.startsWith('/console/') || link.pathname.endsWith('.csv')) continue;
      if (opts.skip?.test(key) === true || seen.has(key)) continue;
      seen.add(key);
      const kind = pageKind(link);
      if ((kinds.get(kind) ?? 0) >= perKind) continue;
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1);
      queue.push(key);
    }
  }
  return out;
}
