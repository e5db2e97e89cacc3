// The record store's text of a table (streamText): PostgreSQL's float8 text rewritten to
// JavaScript's, checked on many doubles against the real server; COPY's line ends made CRLF.
import { after, before, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { onDatabase, POSTGRES_URL } from '../support/databases.js';
import { CsvLineEnds, jsNumber } from '../../src/storage/records/text-postgres.js';

/** Doubles of every magnitude and notation, and random bit patterns (finite ones). */
function doubles(): number[] {
  const out = [0, -0, 1, -1, 0.1, 0.1 + 0.2, 1 / 3, 2 ** 53, 2 ** 53 + 2, Number.MAX_VALUE, Number.MIN_VALUE];
  for (let e = -325; e <= 308; e++) out.push(Number(`1e${e}`), Number(`-1.2345678901234567e${e}`));
  for (let e = -8; e <= 22; e++)
    out.push(Number(`1e${e}`) * (1 - Number.EPSILON), Number(`1e${e}`) * (1 + Number.EPSILON));
  const view = new DataView(new ArrayBuffer(8));
  let seed = 12345;
  while (out.length < 4000) {
    for (let i = 0; i < 8; i++) {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      view.setUint8(i, seed >> 16);
    }
    const v = view.getFloat64(0);
    if (Number.isFinite(v)) out.push(v);
  }
  return out.filter((v) => Number.isFinite(v));
}

await onDatabase('postgres', 'text export: float8 as JavaScript writes it', () => {
  let client: pg.Client;
  before(async () => {
    client = new pg.Client({ connectionString: POSTGRES_URL });
    await client.connect();
    await client.query('set extra_float_digits = 1');
  });
  after(() => client.end());

  void it('renders every double as String(n)', async () => {
    const values = doubles();
    // Sent as text that parses back to the same double (String(n) round-trips).
    const res = await client.query<{ t: string }>(
      `select ${jsNumber('v')} as t from unnest($1::float8[]) with ordinality as u(v, n) order by n`,
      [values.map(String)],
    );
    const wrong = res.rows
      .map((r, i) => ({ got: r.t, want: String(values[i]) }))
      .filter((x) => x.got !== x.want);
    assert.deepEqual(wrong.slice(0, 5), []);
    assert.equal(res.rows.length, values.length);
  });
});

void it('CsvLineEnds: CR before each LF that ends a line, across chunk boundaries, none inside quotes', () => {
  const copy = 'a,"x\ny",1\nb,"q""\n",2\n"",c,\n';
  const expected = 'a,"x\ny",1\r\nb,"q""\n",2\r\n"",c,\r\n';
  for (let cut = 0; cut <= copy.length; cut++) {
    const ends = new CsvLineEnds(false);
    const out = Buffer.concat([
      ends.convert(Buffer.from(copy.slice(0, cut))),
      ends.convert(Buffer.from(copy.slice(cut))),
    ]).toString();
    assert.equal(out, expected, `cut at ${cut}`);
  }
  const lead = new CsvLineEnds(true);
  assert.equal(lead.convert(Buffer.from(',\\.\n,x\n,\n')).toString(), '\\.\r\nx\r\n\r\n');
});
