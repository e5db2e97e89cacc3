// Schemas of datasets, their definitions and tags.
import { Type } from 'typebox';
import { PROPERTY_TYPES, type PropertyType as PropertyTypeName } from '../../domain/datasets/schema.js';
import { SCHEMA_CHANGE_KINDS, type SchemaChangeKind } from '../../domain/datasets/schema-change.js';
import { checkedEnum, component, queryText, ref } from './components.js';
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
      schemaVersion: Type.Integer({
        minimum: 1,
        description: "The schema's version: 1 when defined, bumped by each schema change",
      }),
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

/** What a property is given as, at creation and in a schema change. */
const PROPERTY_FIELDS = {
  name: Type.String({ minLength: 1, maxLength: 63 }),
  type: checkedEnum(PROPERTY_TYPES, { minLength: 1, maxLength: 32 }),
  required: Type.Optional(Type.Boolean()),
};

export const NewDatasetProperty = component('NewDatasetProperty', Type.Object(PROPERTY_FIELDS));

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

export const SchemaChangeProperty = component(
  'SchemaChangeProperty',
  Type.Object({
    ...PROPERTY_FIELDS,
    renamedFrom: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 63,
        description: 'The current property this one renames: its values are kept under the new name',
      }),
    ),
    default: Type.Optional(
      Type.Unsafe<unknown>({
        description:
          "A new property's value in the records held, as JSON of its type; required for a new required property",
      }),
    ),
  }),
);

export const SchemaChange = component(
  'SchemaChange',
  Type.Object(
    {
      properties: Type.Array(ref(SchemaChangeProperty), { minItems: 1, maxItems: 500 }),
      primaryKey: Type.Optional(
        Type.Array(Type.String({ minLength: 1, maxLength: 63 }), {
          maxItems: 32,
          description: 'Absent: the current primary key, which cannot change',
        }),
      ),
    },
    {
      description:
        'The whole new schema (docs/loading.md, "Changing a schema"): a property absent from it is dropped, one not in the current schema is added, unless it names the property it renames',
    },
  ),
);

export const PatchDatasetBody = component(
  'DatasetUpdate',
  Type.Object(
    {
      name: Type.Optional(Name),
      description: Type.Optional(Description),
      schema: Type.Optional(ref(SchemaChange)),
    },
    { minProperties: 1 },
  ),
);

export const PatchDatasetQuery = Type.Object({
  dryRun: Type.Optional(
    queryText<'true' | 'false'>(
      { enum: ['true', 'false'] },
      {
        type: 'boolean',
        default: false,
        description: 'true: report what the schema change would do (a SchemaChangeReport), change nothing',
      },
    ),
  ),
});

export const ReportedSchemaChange = component(
  'ReportedSchemaChange',
  Type.Object({
    kind: Type.Unsafe<SchemaChangeKind>({
      type: 'string',
      enum: [...SCHEMA_CHANGE_KINDS],
      description: 'added, madeOptional, widened, renamed or dropped',
    }),
    property: Type.String({
      description: 'The property, by its name in the new schema (the old one if dropped)',
    }),
    description: Type.String(),
    valuesNotFitting: Type.Integer({ minimum: 0 }),
  }),
);

export const SchemaChangeReport = component(
  'SchemaChangeReport',
  Type.Object(
    {
      dryRun: Type.Literal(true),
      schemaVersion: Type.Integer({ minimum: 1 }),
      newSchemaVersion: Type.Integer({ minimum: 1 }),
      changes: Type.Array(ref(ReportedSchemaChange)),
      recordsTouched: Type.Integer({ minimum: 0, description: 'Records the change would rewrite' }),
      valuesNotFitting: Type.Integer({
        minimum: 0,
        description: 'Values held that would not fit; above 0 the change is refused (409 values_do_not_fit)',
      }),
    },
    { description: 'What a schema change would do (dryRun=true); nothing was changed' },
  ),
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
