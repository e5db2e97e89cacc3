// What a new schema changes in a dataset's current one (PATCH /datasets/{id} with a schema;
// docs/loading.md, "Changing a schema"): the accepted kinds of change, each checked, and where
// each property of the new schema takes its values from. Pure: the records are changed elsewhere
// (change-schema.ts).
import { problem, type FieldErrors } from '../../errors.js';
import type { CellValue } from '../../storage/records/record-store.js';
import { COLUMN_TYPES, wideningOf, type PropertyType } from './column-types.js';
import { parseDatasetSchema, type DatasetSchema, type SchemaProperty } from './schema.js';

/** The kinds of change a schema change may make (a closed set, in the API document). */
export const SCHEMA_CHANGE_KINDS = ['added', 'madeOptional', 'widened', 'renamed', 'dropped'] as const;
export type SchemaChangeKind = (typeof SCHEMA_CHANGE_KINDS)[number];

/** One change of a schema; `property` is the property's name in the new schema (the old one for a drop). */
export type SchemaChange =
  /** A new property; its default (null for none) is written into the records held. */
  | { kind: 'added'; property: string; type: PropertyType; required: boolean; default: CellValue }
  /** A required property becomes optional. */
  | { kind: 'madeOptional'; property: string }
  /** A property's type widens (column-types.ts, WIDENINGS). */
  | { kind: 'widened'; property: string; from: PropertyType; to: PropertyType }
  /** A property is renamed; its values stay. */
  | { kind: 'renamed'; property: string; from: string }
  /** A property (not of the primary key) goes, with its values. */
  | { kind: 'dropped'; property: string };

/** A schema change as a caller sends it: the whole new schema, each property may name the
 * property it renames (`renamedFrom`) and, if new, the value the records held get (`default`). */
export interface SchemaUpdateInput {
  properties: {
    name: string;
    type: string;
    required?: boolean;
    renamedFrom?: string;
    default?: unknown;
  }[];
  /** Absent: the current primary key (which cannot change). */
  primaryKey?: string[];
}

/** Where a property of the new schema takes its values from. */
export type PropertySource =
  { from: 'property'; name: string; type: PropertyType } | { from: 'value'; value: CellValue };

/** A checked schema change: the new schema, what changes, and each new property's source. */
export interface SchemaChangePlan {
  schema: DatasetSchema;
  changes: SchemaChange[];
  /** Aligned with `schema.properties`. */
  sources: PropertySource[];
}

/**
 * Checks `input` against the current schema: a 400 problem for a request that does not say a
 * change clearly (unknown renames, defaults where none can go), a 409 for a change that is refused
 * (of the primary key, a narrowing type, an optional property made required). No change at all
 * is a plan without changes.
 */
export function planSchemaChange(current: DatasetSchema, input: SchemaUpdateInput): SchemaChangePlan {
  const primaryKey = input.primaryKey ?? current.primaryKey;
  refuseKeyChange(current, input, primaryKey);
  const schema = parseDatasetSchema(
    {
      properties: input.properties.map(({ name, type, required }) => ({
        name,
        type,
        ...(required !== undefined ? { required } : {}),
      })),
      primaryKey,
    },
    'schema',
  );
  const old = new Map(current.properties.map((p) => [p.name, p]));
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);
  const claimed = new Map<string, number>();
  const changes: SchemaChange[] = [];
  const refused: { narrowed: string[]; madeRequired: string[] } = { narrowed: [], madeRequired: [] };

  const sources = schema.properties.map((p, i): PropertySource => {
    const sent = input.properties[i];
    const field = `schema.properties[${i}]`;
    const renamedFrom =
      sent?.renamedFrom !== undefined && sent.renamedFrom !== p.name ? sent.renamedFrom : null;
    const sourceName = renamedFrom ?? p.name;
    const before = old.get(sourceName);
    if (renamedFrom !== null && before === undefined) {
      add(`${field}.renamedFrom`, `"${renamedFrom}" is not a property of the current schema`);
    }
    if (before === undefined) return added(p, sent?.default, `${field}.default`, add, changes);
    if (sent?.default !== undefined) {
      add(`${field}.default`, 'only a new property takes a default (it fills the records held)');
    }
    const other = claimed.get(sourceName);
    if (other !== undefined) {
      add(`${field}.renamedFrom`, `"${sourceName}" already becomes schema.properties[${other}]`);
    }
    claimed.set(sourceName, i);
    if (renamedFrom !== null) changes.push({ kind: 'renamed', property: p.name, from: renamedFrom });
    if (before.type !== p.type) {
      if (wideningOf(before.type, p.type) === undefined) {
        refused.narrowed.push(`"${p.name}" from ${before.type} to ${p.type}`);
      } else changes.push({ kind: 'widened', property: p.name, from: before.type, to: p.type });
    }
    if (before.required && !p.required) changes.push({ kind: 'madeOptional', property: p.name });
    if (!before.required && p.required) refused.madeRequired.push(`"${p.name}"`);
    return { from: 'property', name: before.name, type: before.type };
  });
  for (const p of current.properties) {
    if (!claimed.has(p.name)) changes.push({ kind: 'dropped', property: p.name });
  }

  if (Object.keys(errors).length > 0) {
    throw problem('invalid', 'The schema change is not clear; see errors.', { errors });
  }
  if (refused.narrowed.length > 0) {
    throw problem(
      'conflict',
      `Refused: changing the type of ${refused.narrowed.join(', ')} could lose values; only widening is accepted (integer to number, date to datetime).`,
      { code: 'type_narrowing' },
    );
  }
  if (refused.madeRequired.length > 0) {
    throw problem(
      'conflict',
      `Refused: making ${refused.madeRequired.join(', ')} required; records held may lack a value. Only a new property may be required (with a default).`,
      { code: 'property_made_required' },
    );
  }
  return { schema, changes, sources };
}

/** An added property: its default, parsed as its type says, is its value in the records held. */
function added(
  p: SchemaProperty,
  sent: unknown,
  field: string,
  add: (field: string, message: string) => void,
  changes: SchemaChange[],
): PropertySource {
  let value: CellValue = null;
  if (sent !== undefined && sent !== null) {
    const parsed = COLUMN_TYPES[p.type].fromJson(sent);
    if (parsed === undefined) add(field, COLUMN_TYPES[p.type].badJson(sent));
    else value = parsed;
  }
  if (p.required && value === null) {
    add(field, 'a new required property needs a default for the records held');
  }
  changes.push({ kind: 'added', property: p.name, type: p.type, required: p.required, default: value });
  return { from: 'value', value };
}

/** A 409 when the change touches the primary key: its list, or one of its properties (dropped,
 * renamed, or of another type). */
function refuseKeyChange(current: DatasetSchema, input: SchemaUpdateInput, primaryKey: string[]): void {
  const why: string[] = [];
  if (primaryKey.join('\u0000') !== current.primaryKey.join('\u0000')) {
    const shown = (key: string[]) => (key.length > 0 ? key.join(', ') : 'none');
    why.push(`the primary key would change from (${shown(current.primaryKey)}) to (${shown(primaryKey)})`);
  }
  for (const key of current.primaryKey) {
    const kept = input.properties.find((p) => p.name === key);
    const renamed = input.properties.find((p) => p.renamedFrom === key && p.name !== key);
    const type = current.properties.find((p) => p.name === key)?.type;
    if (renamed !== undefined) why.push(`key property "${key}" would be renamed to "${renamed.name}"`);
    else if (kept === undefined) why.push(`key property "${key}" would be dropped`);
    else if (kept.type !== type)
      why.push(`key property "${key}" would change type from ${type} to ${kept.type}`);
    if (kept?.renamedFrom !== undefined && kept.renamedFrom !== key) {
      why.push(`key property "${key}" would take the values of "${kept.renamedFrom}"`);
    }
  }
  if (why.length > 0) {
    throw problem(
      'conflict',
      `Refused: ${why.join('; ')}. The primary key identifies the records held and cannot change; define a new dataset instead.`,
      { code: 'primary_key_change' },
    );
  }
}

/** Whether a change rewrites the records table (a new generation), rather than the schema alone. */
export function rewritesRecords(change: SchemaChange): boolean {
  switch (change.kind) {
    case 'added':
    case 'widened':
    case 'renamed':
    case 'dropped':
      return true;
    case 'madeOptional':
      return false;
  }
}

/** A change in words, as job failures and the dry-run report name it. */
export function describeChange(change: SchemaChange): string {
  switch (change.kind) {
    case 'added':
      return `added ${change.required ? 'required' : 'optional'} "${change.property}" (${change.type})`;
    case 'madeOptional':
      return `made "${change.property}" optional`;
    case 'widened':
      return `widened "${change.property}" from ${change.from} to ${change.to}`;
    case 'renamed':
      return `renamed "${change.from}" to "${change.property}"`;
    case 'dropped':
      return `dropped "${change.property}"`;
  }
}
