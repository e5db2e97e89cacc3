import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { COLUMN_TYPES, PROPERTY_TYPES, describeBadJson, describeBadText } from './column-types.js';
import { tableSchemaOf } from './schema.js';

describe('the column-type table', () => {
  it('lists the types in the documented order, each with its storage kind', () => {
    assert.deepEqual(PROPERTY_TYPES, ['string', 'integer', 'boolean', 'number', 'date', 'datetime']);
    assert.deepEqual(Object.fromEntries(PROPERTY_TYPES.map((t) => [t, COLUMN_TYPES[t].storage])), {
      string: 'text',
      integer: 'int64',
      boolean: 'boolean',
      number: 'float64',
      date: 'text',
      datetime: 'text',
    });
  });

  it('maps a dataset schema to its records table', () => {
    const schema = {
      properties: [
        { name: 'id', type: 'integer' as const, required: true },
        { name: 'ok', type: 'boolean' as const, required: false },
        { name: 'at', type: 'datetime' as const, required: false },
        { name: 'x', type: 'number' as const, required: false },
      ],
      primaryKey: ['id'],
    };
    assert.deepEqual(tableSchemaOf(schema), {
      columns: [
        { name: 'id', kind: 'int64' },
        { name: 'ok', kind: 'boolean' },
        { name: 'at', kind: 'text' },
        { name: 'x', kind: 'float64' },
      ],
      primaryKey: ['id'],
    });
  });

  it('parses each type from text and from JSON', () => {
    const parsed: [keyof typeof COLUMN_TYPES, string, unknown, unknown][] = [
      ['string', 'a\tb', 'a\tb', 'a\tb'],
      ['integer', '9223372036854775807', '9223372036854775807', 9223372036854775807n],
      ['boolean', 'TRUE', true, true],
      ['number', '-2.5E-2', -2.5e-2, -0.025],
      ['date', '2024-02-29', '2024-02-29', '2024-02-29'],
      ['datetime', '2024-08-21T23:16:34+02:00', '2024-08-21T21:16:34Z', '2024-08-21T21:16:34.000000'],
    ];
    for (const [type, text, json, value] of parsed) {
      assert.equal(COLUMN_TYPES[type].fromText(text), value, `${type} from text`);
      assert.equal(COLUMN_TYPES[type].fromJson(json), value, `${type} from JSON`);
    }
  });

  it('refuses text with the same words as ever', () => {
    const refused: [keyof typeof COLUMN_TYPES, string, string][] = [
      ['integer', '1.5', '"1.5" is not an integer'],
      ['integer', '9223372036854775808', '"9223372036854775808" is outside the 64-bit integer range'],
      ['boolean', 'yes', '"yes" is not a boolean (true/false or 1/0)'],
      ['number', 'NaN', '"NaN" is not a finite decimal number'],
      ['date', '2023-02-29', '"2023-02-29" is not a real calendar date'],
      ['date', '29.02.2024', '"29.02.2024" is not a date (YYYY-MM-DD)'],
      ['datetime', 'yesterday', '"yesterday" is not an ISO 8601 date-time'],
      ['datetime', 'y'.repeat(41), `"${'y'.repeat(40)}…" is not an ISO 8601 date-time`],
    ];
    for (const [type, text, message] of refused) {
      assert.equal(COLUMN_TYPES[type].fromText(text), undefined, `${type} ${text}`);
      assert.equal(describeBadText(type, text), message);
    }
    assert.equal(COLUMN_TYPES.string.fromText(' kept as is '), ' kept as is ');
  });

  it('refuses JSON values with the same words as ever', () => {
    const refused: [keyof typeof COLUMN_TYPES, unknown, string][] = [
      [
        'integer',
        2 ** 60,
        '1152921504606847000 is beyond 2^53 and loses digits as a JSON number; send it as a string of digits',
      ],
      ['integer', '-9223372036854775809', '"-9223372036854775809" is outside the 64-bit integer range'],
      ['integer', 1.5, 'expected an integer, got 1.5'],
      ['boolean', 1, 'expected true or false, got 1'],
      ['number', '5', 'expected a finite decimal number, got "5"'],
      ['date', '2023-02-29', 'expected a date (YYYY-MM-DD), got "2023-02-29"'],
      ['datetime', [], 'expected an ISO 8601 date-time, got an array'],
      ['string', { a: 1 }, 'expected a string, got an object'],
      ['string', true, 'expected a string, got true'],
    ];
    for (const [type, value, message] of refused) {
      assert.equal(COLUMN_TYPES[type].fromJson(value), undefined, `${type} ${String(value)}`);
      assert.equal(describeBadJson(type, value), message);
    }
  });

  it('renders values as read into JSON text, integers digit for digit', () => {
    assert.equal(COLUMN_TYPES.integer.toJson('-9223372036854775808'), '-9223372036854775808');
    assert.equal(COLUMN_TYPES.integer.toJson(12), '12');
    assert.equal(COLUMN_TYPES.string.toJson('12'), '"12"');
    assert.equal(COLUMN_TYPES.string.toJson('a "q"\n'), '"a \\"q\\"\\n"');
    assert.equal(COLUMN_TYPES.boolean.toJson(false), 'false');
    assert.equal(COLUMN_TYPES.number.toJson(0.1), '0.1');
    assert.equal(COLUMN_TYPES.number.toJson(Infinity), 'null');
    assert.equal(COLUMN_TYPES.datetime.toJson('2024-08-21T21:16:34.000000'), '"2024-08-21T21:16:34.000000"');
  });

  it('parses filter values as before', () => {
    const integer = COLUMN_TYPES.integer.fromFilter;
    assert.equal(integer('9007199254740993'), 9007199254740993n);
    assert.equal(integer('-9223372036854775808'), -9223372036854775808n);
    assert.equal(integer('42'), 42);
    for (const bad of ['+5', '9223372036854775808', '00000000000000000001', '1.0', '', 'abc']) {
      assert.equal(integer(bad), undefined, bad);
    }
    const boolean = COLUMN_TYPES.boolean.fromFilter;
    assert.deepEqual(['TRUE', '1', 'False', '0', 'yes', ''].map(boolean), [
      true,
      true,
      false,
      false,
      undefined,
      undefined,
    ]);
    const number = COLUMN_TYPES.number.fromFilter;
    // Filters have always taken what Number() takes, surrounding blanks and hex included.
    assert.deepEqual(['0.5', ' 2 ', '0x10', '', ' ', 'Infinity', 'abc'].map(number), [
      0.5,
      2,
      16,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    assert.equal(COLUMN_TYPES.date.fromFilter('not checked'), 'not checked');
  });
});
