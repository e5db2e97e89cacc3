// On a Node.js without the internal the built-in backend needs, `auto` must fall back to wasm and
// a forced `builtin` must refuse to start. Such a Node.js is played by a child process in which
// requiring `_http_common` fails.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';

const seam = new URL('./index.js', import.meta.url).href;
/** Run first: `_http_common` cannot be required, as on a Node.js that dropped it. */
const withoutInternal = `
import Module from 'node:module';
const load = Module._load;
Module._load = function (request, ...rest) {
  if (request === '_http_common') throw new Error('no such built-in module');
  return load.call(this, request, ...rest);
};`;

/** Runs `code` (an ES module body that imports the parser seam) without the internal. */
function withoutTheInternal(code: string): { status: number | null; out: string } {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', withoutInternal + code], {
    encoding: 'utf8',
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

void describe('parser backend choice on a Node.js without _http_common', () => {
  void it('auto runs on wasm, which parses and refuses as llhttp does', () => {
    const r = withoutTheInternal(`
      const { useParserBackend, createParser, REQUEST } = await import(${JSON.stringify(seam)});
      const heads = [];
      const name = useParserBackend('auto').name;
      const p = createParser(REQUEST, { onHeadersComplete: (a, b, h, m, url) => { heads.push(url); return 0; },
        onBody: () => {}, onMessageComplete: () => {} });
      const bad = p.execute(Buffer.from('GET / HTTP/1.1\\r\\nHost: h\\nX: y\\r\\n\\r\\n'));
      const p2 = createParser(REQUEST, { onHeadersComplete: (a, b, h, m, url) => { heads.push(url); return 0; },
        onBody: () => {}, onMessageComplete: () => {} });
      p2.execute(Buffer.from('GET /ok HTTP/1.1\\r\\nHost: h\\r\\n\\r\\n'));
      console.log(JSON.stringify({ name, heads, bad: bad.code }));`);
    assert.equal(r.status, 0, r.out);
    assert.deepEqual(JSON.parse(r.out.trim().split('\n').at(-1) ?? ''), {
      name: 'wasm',
      heads: ['/ok'],
      bad: 'HPE_CR_EXPECTED',
    });
  });

  void it('a forced builtin refuses to start, saying why', () => {
    const r = withoutTheInternal(`
      const { useParserBackend } = await import(${JSON.stringify(seam)});
      useParserBackend('builtin');`);
    assert.notEqual(r.status, 0);
    assert.match(
      r.out,
      /PROXY_HTTP_PARSER=builtin: this Node.js has no working HTTPParser in '_http_common'/,
    );
  });
});
