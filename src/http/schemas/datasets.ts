// Schemas of datasets, their definitions and tags.
import { Type } from 'typebox';
import { PROPERTY_TYPES, type PropertyType as PropertyTypeName } from '../../domain/datasets/schema.js';
import { Timestamp, UserSummary, WorkspaceSummary } from './common.js';

const PropertyType = Type.Unsafe<PropertyTypeName>({ type: 'string', enum: [...PROPERTY_TYPES] });

export const DatasetTag = Type.Object({
  datasetTagId: Type.String(),
  name: Type.String(),
  datasetId: Type.String(),
  platformAppId: Type.String(),
});

export const Dataset = Type.Object({
  datasetId: Type.String(),
  name: Type.String(),
  description: Type.String(),
  dateCreated: Timestamp,
  recordCount: Type.Integer(),
  dateLastRecordUpdated: Type.Union([Timestamp, Type.Null()]),
  createdBy: UserSummary,
  createdByWorkspace: WorkspaceSummary,
  datasetTags: Type.Array(DatasetTag),
  datasetSchema: Type.Object({
    datasetSchemaId: Type.Integer(),
    properties: Type.Array(
      Type.Object({ name: Type.String(), type: PropertyType, required: Type.Boolean() }),
    ),
    primaryKey: Type.Array(Type.String()),
  }),
});

const Name = Type.String({ minLength: 1, maxLength: 200 });
const Description = Type.String({ maxLength: 2000 });

export const NewDatasetBody = Type.Object({
  name: Name,
  description: Type.Optional(Description),
  schema: Type.Object({
    properties: Type.Array(
      Type.Object({
        name: Type.String({ minLength: 1, maxLength: 63 }),
        // Checked by the domain so the message can list the allowed types.
        type: Type.String({ minLength: 1, maxLength: 32 }),
        required: Type.Optional(Type.Boolean()),
      }),
      { minItems: 1, maxItems: 500 },
    ),
    primaryKey: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 63 }), { maxItems: 32 })),
  }),
  tagIds: Type.Optional(
    Type.Array(Type.Object({ platformAppId: Type.String({ minLength: 1 }) }), { maxItems: 100 }),
  ),
});

export const PatchDatasetBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description) },
  { minProperties: 1 },
);

export const DatasetParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const TagApp = Type.Object({ appName: Type.String(), platformAppId: Type.String() });

export const NewTagBody = Type.Object({ platformAppId: Type.String({ minLength: 1 }) });

export const TagParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  datasetTagId: Type.String({ minLength: 1, maxLength: 64 }),
});
