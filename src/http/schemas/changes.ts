// Schemas of the change feed (GET /datasets/{id}/changes).
import { Type } from 'typebox';
import { CHANGE_OPS, type ChangeOp } from '../../domain/changes/feed.js';
import { component, ref } from './components.js';
import { PageQueryFields } from './jobs.js';
import { Record } from './records.js';
import { DatasetProperty, ReportedSchemaChange } from './datasets.js';

export const ChangesQuery = Type.Object({
  since: Type.String({
    minLength: 1,
    maxLength: 4096,
    description:
      'Where to start: the changesCursor of a records read (GET .../records, records:retrieve) or the nextCursor of a feed page. Opaque; bound to the dataset and the installation.',
  }),
  pageSize: PageQueryFields.pageSize,
});

export const ChangeEntry = component(
  'DatasetChange',
  Type.Object(
    {
      op: Type.Unsafe<ChangeOp>({
        type: 'string',
        enum: [...CHANGE_OPS],
        description:
          'upsert: `record` is the whole current record; delete: `key` holds the deleted primary key; schemaChanged: the schema moved to `schemaVersion` (`schema`, `changes`); the records it rewrote follow as upserts',
      }),
      record: Type.Optional(ref(Record)),
      key: Type.Optional(ref(Record)),
      schemaVersion: Type.Optional(Type.Integer({ minimum: 1 })),
      schema: Type.Optional(
        Type.Object({
          properties: Type.Array(ref(DatasetProperty)),
          primaryKey: Type.Array(Type.String()),
        }),
      ),
      changes: Type.Optional(Type.Array(ref(ReportedSchemaChange))),
    },
    { description: 'One change: a key appears once per read, at its latest change' },
  ),
);

export const ChangePage = component(
  'DatasetChangePage',
  Type.Object({
    metadata: Type.Object({
      count: Type.Integer(),
      nextCursor: Type.String({
        description: 'Where the next read starts; on the last page (hasMore false), the cursor to keep',
      }),
      hasMore: Type.Boolean({ description: 'true: read on now with nextCursor' }),
    }),
    data: Type.Array(ref(ChangeEntry)),
  }),
);
