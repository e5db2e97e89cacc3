// The typed schema of a dataset: which properties (columns) it has, their types, and its primary key.
import { problem, type FieldErrors } from '../../errors.js';
import type { TableSchema } from '../../storage/records/record-store.js';
import { COLUMN_TYPES, PROPERTY_TYPES, type PropertyType } from './column-types.js';

export { PROPERTY_TYPES, type PropertyType };

export interface SchemaProperty {
  name: string;
  type: PropertyType;
  required: boolean;
}

export interface DatasetSchema {
  properties: SchemaProperty[];
  primaryKey: string[];
}

/** What a caller may send: `required` is optional and defaults to false. */
export interface DatasetSchemaInput {
  properties: { name: string; type: string; required?: boolean }[];
  primaryKey?: string[];
}

const PROPERTY_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
export const MAX_PROPERTIES = 500;

/** Validates a schema definition; throws a 400 problem naming every bad field. */
export function parseDatasetSchema(input: DatasetSchemaInput, path = 'schema'): DatasetSchema {
  const errors: FieldErrors = {};
  const add = (field: string, message: string) => (errors[field] ??= []).push(message);

  if (input.properties.length === 0) add(`${path}.properties`, 'must list at least one property');
  if (input.properties.length > MAX_PROPERTIES)
    add(`${path}.properties`, `at most ${MAX_PROPERTIES} properties`);
  const seen = new Set<string>();
  const properties: SchemaProperty[] = input.properties.map((p, i) => {
    const field = `${path}.properties[${i}]`;
    if (!PROPERTY_NAME.test(p.name)) {
      add(`${field}.name`, 'letters, digits and _ only, not starting with a digit, at most 63 characters');
    }
    const lower = p.name.toLowerCase();
    if (seen.has(lower)) add(`${field}.name`, `duplicate property name "${p.name}"`);
    seen.add(lower);
    if (!(PROPERTY_TYPES as readonly string[]).includes(p.type)) {
      add(`${field}.type`, `must be one of ${PROPERTY_TYPES.join(', ')}`);
    }
    return { name: p.name, type: p.type as PropertyType, required: p.required ?? false };
  });

  const primaryKey = input.primaryKey ?? [];
  const names = new Set(properties.map((p) => p.name));
  primaryKey.forEach((key, i) => {
    if (!names.has(key)) add(`${path}.primaryKey[${i}]`, `"${key}" is not a property of the schema`);
  });
  if (new Set(primaryKey).size !== primaryKey.length) add(`${path}.primaryKey`, 'lists a property twice');

  if (Object.keys(errors).length > 0) {
    throw problem('invalid', 'The dataset schema is invalid.', { errors });
  }
  // Primary-key values identify records, so they can never be null.
  const keyed = properties.map((p) => (primaryKey.includes(p.name) ? { ...p, required: true } : p));
  return { properties: keyed, primaryKey };
}

/** The records table of a schema: each property a column of its type's storage kind, same key. */
export function tableSchemaOf(schema: DatasetSchema): TableSchema {
  return {
    columns: schema.properties.map((p) => ({ name: p.name, kind: COLUMN_TYPES[p.type].storage })),
    primaryKey: schema.primaryKey,
  };
}
