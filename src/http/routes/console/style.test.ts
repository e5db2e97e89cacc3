// The console's palette against WCAG 2.2 AA, computed from the stylesheet itself: text at 4.5:1
// or more on the background it sits on (1.4.3), and what marks a control or focus at 3:1 or more
// against the white page (1.4.11). A colour change that breaks either fails here, naming the rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CONSOLE_CSS } from './style.js';

/** WCAG's relative luminance of a #rgb or #rrggbb colour. */
function luminance(hex: string): number {
  const h = hex.length === 4 ? [...hex.slice(1)].map((c) => c + c).join('') : hex.slice(1);
  const [r, g, b] = [0, 2, 4].map((i) => {
    const c = parseInt(h.slice(i, i + 2), 16) / 255;
    return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

/** The contrast ratio of two colours, 1 to 21. */
function contrast(a: string, b: string): number {
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x);
  return (hi! + 0.05) / (lo! + 0.05);
}

interface Rule {
  selector: string;
  decls: Map<string, string>;
}

/** The stylesheet's innermost rules (those inside @media too), in order. */
function rules(css: string): Rule[] {
  return [...css.matchAll(/([^{}]+)\{([^{}]*)\}/g)].map((m) => ({
    selector: m[1]!.trim(),
    decls: new Map(
      m[2]!
        .split(';')
        .map((d) => d.split(':'))
        .filter((p) => p.length >= 2)
        .map(([k, ...v]) => [k!.trim(), v.join(':').trim()]),
    ),
  }));
}

const HEX = /#[0-9a-f]{6}\b|#[0-9a-f]{3}\b/i;
const colourIn = (value: string | undefined) => (value === undefined ? undefined : HEX.exec(value)?.[0]);

const all = rules(CONSOLE_CSS);
const page = all.find((r) => r.selector === 'html')!;
const PAGE_BG = colourIn(page.decls.get('background'))!;
const PAGE_TEXT = colourIn(page.decls.get('color'))!;

/**
 * Where a rule sets a background and its text colour comes from a rule the cascade cannot show
 * here (the skip link is an `a`): which rule.
 */
const TEXT_FROM: Record<string, string> = { '.skip:focus': 'a' };

/**
 * The text colour a rule's elements have: its own, else that of the same selector without its
 * states (`button.danger:hover` → `button.danger`), else of its element (`button`), else as
 * TEXT_FROM says, else the page's.
 */
function textColour(rule: Rule): string {
  const withoutStates = rule.selector.replace(/:[a-z-]+(\([^)]*\))?/g, '');
  const element = /^[a-z]+/.exec(withoutStates)?.[0];
  const candidates = [rule.selector, withoutStates, element, TEXT_FROM[rule.selector]];
  for (const selector of candidates) {
    if (selector === undefined) continue;
    const colour = colourIn(
      all.find((r) => r.selector === selector && r.decls.has('color'))?.decls.get('color'),
    );
    if (colour !== undefined) return colour;
  }
  return PAGE_TEXT;
}

test('a state or variant of a control takes its text colour from the control', () => {
  const hover = { selector: 'button:hover', decls: new Map([['background', '#07305f']]) };
  assert.equal(textColour(hover), colourIn(all.find((r) => r.selector === 'button')!.decls.get('color')));
  const variant = { selector: 'button.other:hover', decls: new Map([['background', '#000']]) };
  assert.equal(textColour(variant).toLowerCase(), '#fff');
  assert.equal(textColour({ selector: '.unknown', decls: new Map() }), PAGE_TEXT);
});

test('the stylesheet has the colours this check reads', () => {
  assert.equal(PAGE_BG.toLowerCase(), '#fff');
  assert.ok(all.filter((r) => r.decls.has('color')).length >= 8);
});

test('text is at least 4.5:1 on its background in every rule (WCAG 1.4.3, AA)', () => {
  const failures: string[] = [];
  for (const rule of all) {
    const bg = colourIn(rule.decls.get('background') ?? rule.decls.get('background-color'));
    if (!rule.decls.has('color') && bg === undefined) continue;
    const fg = textColour(rule);
    const ratio = contrast(fg, bg ?? PAGE_BG);
    if (ratio < 4.5) failures.push(`${rule.selector}: ${fg} on ${bg ?? PAGE_BG} is ${ratio.toFixed(2)}:1`);
  }
  assert.deepEqual(failures, []);
});

test('focus outlines, control borders and button fills are at least 3:1 on the page (WCAG 1.4.11)', () => {
  const failures: string[] = [];
  for (const rule of all) {
    for (const prop of ['outline', 'border', 'border-color', 'border-left']) {
      const colour = colourIn(rule.decls.get(prop));
      // Decorative rules (table lines, the header's rule) mark no control and need no contrast.
      const marksControl = /input|select|button|focus|\.error|\.notice|\.secret/.test(rule.selector);
      if (colour === undefined || !marksControl) continue;
      const ratio = contrast(colour, PAGE_BG);
      if (ratio < 3) failures.push(`${rule.selector} ${prop}: ${colour} is ${ratio.toFixed(2)}:1`);
    }
  }
  const focus = all.find((r) => r.selector === ':focus-visible');
  assert.ok(
    focus !== undefined && /\b[2-9]px solid/.test(focus.decls.get('outline') ?? ''),
    'a solid focus ring of 2px+',
  );
  assert.deepEqual(failures, []);
});

test('the contrast formula gives WCAG reference values', () => {
  assert.equal(contrast('#000', '#fff').toFixed(1), '21.0');
  assert.equal(contrast('#767676', '#fff').toFixed(2), '4.54');
  assert.equal(contrast('#fff', '#fff'), 1);
});
