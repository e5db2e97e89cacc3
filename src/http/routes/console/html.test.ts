import { test } from 'node:test';
import assert from 'node:assert/strict';
import { escapeHtml, html } from './html.js';

test('html escapes interpolated text, attributes included', () => {
  const name = `<script>alert("x")</script>&'`;
  assert.equal(
    html`<p title="${name}">${name}</p>`.value,
    '<p title="&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;">&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;</p>',
  );
});

test('html keeps its own fragments and arrays of them, and drops null, undefined and false', () => {
  const items = ['a<', 'b'].map((x) => html`<li>${x}</li>`);
  // prettier-ignore
  const out = html`<ul>${items}</ul>${null}${undefined}${false}${0}`.value;
  assert.equal(out, '<ul><li>a&lt;</li><li>b</li></ul>0');
});

test('escapeHtml leaves plain text alone', () => {
  assert.equal(escapeHtml('Campaign 2026'), 'Campaign 2026');
});
