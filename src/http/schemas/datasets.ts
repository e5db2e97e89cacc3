// Schemas of datasets, their definitions and tags.
import { Type } from 'typebox';
import { PROPERTY_TYPES, type PropertyType as PropertyTypeName } from '../../domain/datasets/schema.js';
import { checkedEnum, component, ref } from './components.js';
import { AppIdFields, AppIdRefFields, Envelope, Timestamp, UserSummary, WorkspaceSummary } from './common.js';

const PropertyType = Type.Unsafe<PropertyTypeName>({ type: 'string', enum: [...PROPERTY_TYPES] });

export const DatasetTag = component(
  'DatasetTag',
  Type.Object(
    {
      datasetTagId: Type.String(),
      name: Type.String(),
      datasetId: Type.String(),
      ...AppIdFields,
    },
    { description: 'Another app allowed to see the dataset' },
  ),
);

export const DatasetProperty = component(
  'DatasetProperty',
  Type.Object({ name: Type.String(), type: PropertyType, required: Type.Boolean() }),
);

export const DatasetSchema = component(
  'DatasetSchema',
  Type.Object({
    datasetSchemaId: Type.Integer(),
    properties: Type.Array(ref(DatasetProperty)),
    primaryKey: Type.Array(Type.String()),
  }),
);

export const Dataset = component(
  'Dataset',
  Type.Object(
    {
      datasetId: Type.String(),
      name: Type.String(),
      description: Type.String(),
      dateCreated: Timestamp,
      recordCount: Type.Integer(),
      dateLastRecordUpdated: Type.Union([Timestamp, Type.Null()]),
      createdBy: ref(UserSummary),
      createdByWorkspace: ref(WorkspaceSummary),
      datasetTags: Type.Array(ref(DatasetTag)),
      datasetSchema: ref(DatasetSchema),
    },
    { description: 'A dataset: its definition and record count' },
  ),
);

export const DatasetList = Envelope('DatasetList', Dataset);

/** An app named in a request: platformAppId, or movementAppId as DXAPI clients send it. */
export const AppRef = component(
  'AppRef',
  Type.Object(AppIdRefFields, { description: 'An app, by platformAppId (or movementAppId)' }),
);

const Name = Type.String({ minLength: 1, maxLength: 200 });
const TagIds = Type.Array(ref(AppRef), {
  maxItems: 100,
  description: 'Apps (besides the creating one) that may see the dataset',
});
const Description = Type.String({ maxLength: 2000 });

export const NewDatasetProperty = component(
  'NewDatasetProperty',
  Type.Object({
    name: Type.String({ minLength: 1, maxLength: 63 }),
    type: checkedEnum(PROPERTY_TYPES, { minLength: 1, maxLength: 32 }),
    required: Type.Optional(Type.Boolean()),
  }),
);

export const NewDatasetSchema = component(
  'NewDatasetSchema',
  Type.Object({
    properties: Type.Array(ref(NewDatasetProperty), { minItems: 1, maxItems: 500 }),
    primaryKey: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 63 }), { maxItems: 32 })),
  }),
);

export const NewDatasetBody = component(
  'NewDataset',
  Type.Object({
    name: Name,
    description: Type.Optional(Description),
    schema: ref(NewDatasetSchema),
    tagIds: Type.Optional(TagIds),
    tag_ids: Type.Optional({ ...TagIds, description: 'Alias of tagIds, as some DXAPI clients send it' }),
  }),
);

export const PatchDatasetBody = component(
  'DatasetUpdate',
  Type.Object({ name: Type.Optional(Name), description: Type.Optional(Description) }, { minProperties: 1 }),
);

export const DatasetParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The datasetId' }),
});

export const TagApp = component(
  'ConnectedApp',
  Type.Object(
    { appName: Type.String(), ...AppIdFields },
    { description: 'An app connected to the workspace, which datasets may be tagged with' },
  ),
);

export const ConnectedAppList = Envelope('ConnectedAppList', TagApp);

export const NewTagBody = AppRef;

export const TagParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 64, description: 'The datasetId' }),
  datasetTagId: Type.String({ minLength: 1, maxLength: 64 }),
});
