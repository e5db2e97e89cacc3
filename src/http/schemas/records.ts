// Schemas of record retrieval and pages.
import { Type } from 'typebox';
import { component, ref } from './components.js';
import { PageQueryFields } from './jobs.js';

export const RetrieveBody = component(
  'RecordsRetrieveRequest',
  Type.Object(
    {
      contentType: Type.Optional(
        Type.Unsafe<'csv' | 'json'>({
          type: 'string',
          enum: ['csv', 'json'],
          default: 'csv',
          description: 'csv: text/csv; json: newline-delimited JSON (application/x-ndjson)',
        }),
      ),
    },
    { description: 'May be left out: CSV' },
  ),
);

export const RetrieveResult = component(
  'DownloadLink',
  Type.Object({
    url: Type.String({ description: 'Signed download link, valid for 1 hour' }),
    changesCursor: Type.Optional(
      Type.Union([Type.String(), Type.Null()], {
        description:
          'The change feed (GET .../changes?since=) goes on from here after the records the link gives; null for a dataset without a primary key. Also in the DX-Changes-Cursor header',
      }),
    ),
  }),
);

/** The record filters: any query parameter besides pageSize and pageToken (docs/api.md). */
export const RECORD_FILTERS_DESCRIPTION =
  'Equality filters: every other query parameter `<property>=<value>` keeps the records whose ' +
  'property equals the value (given as text: `true`/`false` for booleans, digits for integers; ' +
  'each may be given once; several must all hold). An unknown property or a value not of its type is a 400.';

export const RecordsQuery = Type.Object(PageQueryFields, {
  additionalProperties: Type.String(),
  description: RECORD_FILTERS_DESCRIPTION,
});

export const Record = component(
  'DatasetRecord',
  Type.Record(Type.String(), Type.Unknown(), {
    description:
      'A record: property → value; integer values are JSON numbers written digit for digit (64-bit exact)',
  }),
);

export const RecordsPage = component(
  'RecordPage',
  Type.Object({
    metadata: Type.Object({
      count: Type.Integer(),
      nextPageToken: Type.Union([Type.String(), Type.Null()], { description: 'null: the last page' }),
      changesCursor: Type.Optional(
        Type.Union([Type.String(), Type.Null()], {
          description:
            'The change feed (GET .../changes?since=) goes on from here after the records of this read (the same on every page of one read); null for a dataset without a primary key',
        }),
      ),
    }),
    data: Type.Array(ref(Record)),
  }),
);

export const DownloadParams = Type.Object({
  datasetId: Type.String({ minLength: 1, maxLength: 64 }),
  file: Type.String({
    pattern: '^[0-9]{1,12}\\.(csv|ndjson)$',
    description: '<linkId>.csv or <linkId>.ndjson',
  }),
});
