// Schemas of record retrieval and pages.
import { Type } from 'typebox';

export const RetrieveBody = Type.Object(
  {
    contentType: Type.Optional(
      Type.Unsafe<'csv' | 'json'>({ type: 'string', enum: ['csv', 'json'], default: 'csv' }),
    ),
  },
  { description: 'May be left out: CSV' },
);

export const RetrieveResult = Type.Object({
  url: Type.String({ description: 'Signed download link, valid for 1 hour' }),
});

export const RecordsQuery = Type.Object(
  {
    pageSize: Type.Optional(Type.String({ pattern: '^[0-9]+$', description: '1 to 10000, default 100' })),
    pageToken: Type.Optional(Type.String({ description: 'nextPageToken of the previous page' })),
  },
  {
    additionalProperties: Type.String(),
    description: 'Other parameters: <property>=<value> equality filters',
  },
);

export const RecordsPage = Type.Object({
  metadata: Type.Object({ count: Type.Integer(), nextPageToken: Type.Union([Type.String(), Type.Null()]) }),
  data: Type.Array(Type.Record(Type.String(), Type.Unknown()), {
    description: 'Records; integer values are JSON numbers written digit for digit (64-bit exact)',
  }),
});

export const DownloadParams = Type.Object({
  datasetId: Type.String({ minLength: 1, maxLength: 64 }),
  file: Type.String({ pattern: '^[0-9]{1,12}\\.(csv|ndjson)$' }),
});
