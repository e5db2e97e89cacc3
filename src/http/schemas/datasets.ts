// Schemas of datasets, their definitions and tags.
import { Type } from 'typebox';
import { PROPERTY_TYPES, type PropertyType as PropertyTypeName } from '../../domain/datasets/schema.js';
import { AppIdFields, AppIdRef, Timestamp, UserSummary, WorkspaceSummary } from './common.js';

const PropertyType = Type.Unsafe<PropertyTypeName>({ type: 'string', enum: [...PROPERTY_TYPES] });

export const DatasetTag = Type.Object({
  datasetTagId: Type.String(),
  name: Type.String(),
  datasetId: Type.String(),
  ...AppIdFields,
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
const TagIds = Type.Array(AppIdRef, {
  maxItems: 100,
  description: 'Apps (besides the creating one) that may see the dataset',
});
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
  tagIds: Type.Optional(TagIds),
  tag_ids: Type.Optional({ ...TagIds, description: 'Alias of tagIds, as some DXAPI clients send it' }),
});

export const PatchDatasetBody = Type.Object(
  { name: Type.Optional(Name), description: Type.Optional(Description) },
  { minProperties: 1 },
);

export const DatasetParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });

export const TagApp = Type.Object({ appName: Type.String(), ...AppIdFields });

export const NewTagBody = AppIdRef;

export const TagParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64 }),
  datasetTagId: Type.String({ minLength: 1, maxLength: 64 }),
});
