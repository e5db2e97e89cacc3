// A schema change (PATCH /datasets/{id} with a schema; docs/loading.md, "Changing a schema"): the
// records are copied in SQL into a new table of the new schema (a generation, as a load writes),
// which is swapped in with the schema, its version and the dataset's row in ONE transaction
// (swapGeneration, the load's commit): readers see the old schema with its records or the new one
// with its records, never a mix. A dry run counts what the change would do and changes nothing.
import { randomBytes } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Tables } from '../../storage/db/tables.js';
import {
  changesTableName,
  tablePrefix,
  type CopiedColumn,
  type RecordStore,
} from '../../storage/records/index.js';
import { discardBatch, openBatch, publishBatch } from '../changes/batches.js';
import { enqueueDatasetChanged } from '../webhooks/outbox.js';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import { appActor, audit } from '../console/audit.js';
import { asServiceDb, consoleDb } from '../console/db.js';
import { keepBuiltTable, ledgerBuiltTable, swapGeneration } from './generations.js';
import { wideningOf, type PropertyType } from './column-types.js';
import { findVisibleDatasetWithSchema, getDataset, type DatasetCaller } from './datasets.js';
import { tableSchemaOf, type DatasetSchema } from './schema.js';
import {
  describeChange,
  planSchemaChange,
  rewritesRecords,
  type PropertySource,
  type SchemaChange,
  type SchemaChangeKind,
  type SchemaChangePlan,
  type SchemaUpdateInput,
} from './schema-change.js';
import type { Dataset } from './view.js';

/** One change as a dry run reports it. */
export interface ReportedChange {
  kind: SchemaChangeKind;
  property: string;
  description: string;
  /** Values held that would not fit the change (a widened integer beyond ±2^53); 0 for others. */
  valuesNotFitting: number;
}

/** What a schema change would do (dryRun=true): nothing is changed. */
export interface SchemaChangeReport {
  dryRun: true;
  schemaVersion: number;
  /** The version the change would make; the same when nothing changes. */
  newSchemaVersion: number;
  changes: ReportedChange[];
  /** Records the change would rewrite: all those held when a column is added, widened, renamed or dropped. */
  recordsTouched: number;
  valuesNotFitting: number;
}

/** A PATCH that carries a schema: the new schema, and the name and description it may also set. */
export interface SchemaPatch {
  schema: SchemaUpdateInput;
  name?: string;
  description?: string;
}

/** Applies a schema change (with the name and description sent) and returns the dataset, or, for a
 * dry run, the report of what it would do. `recordChanges` false: the change feed is off, and the
 * change log gets nothing. */
export async function changeSchema(
  db: Kysely<Tables>,
  records: RecordStore,
  caller: DatasetCaller,
  datasetId: string,
  patch: SchemaPatch,
  dryRun: boolean,
  recordChanges = true,
): Promise<Dataset | SchemaChangeReport> {
  const { row, schema } = await findVisibleDatasetWithSchema(db, caller, datasetId);
  const plan = planSchemaChange(schema, patch.schema);
  const rewrite = row.records_table !== null && plan.changes.some(rewritesRecords);
  const reported = await Promise.all(
    plan.changes.map(async (change): Promise<ReportedChange> => ({
      kind: change.kind,
      property: change.property,
      description: describeChange(change),
      valuesNotFitting:
        row.records_table === null ? 0 : await notFitting(records, row.records_table, plan, change),
    })),
  );
  const valuesNotFitting = reported.reduce((n, c) => n + c.valuesNotFitting, 0);
  if (dryRun) {
    return {
      dryRun: true,
      schemaVersion: row.schema_version,
      newSchemaVersion: row.schema_version + (plan.changes.length > 0 ? 1 : 0),
      changes: reported,
      recordsTouched: rewrite ? Number(row.record_count) : 0,
      valuesNotFitting,
    };
  }
  if (valuesNotFitting > 0) {
    const which = reported
      .filter((c) => c.valuesNotFitting > 0)
      .map((c) => `${c.description}: ${c.valuesNotFitting}`);
    throw problem(
      'conflict',
      `Refused: values held do not fit the new type (${which.join('; ')}); integers beyond ±2^53 would lose digits as numbers.`,
      { code: 'values_do_not_fit' },
    );
  }

  const now = nowTimestamp();
  const names = {
    updated_at: now,
    ...(patch.name !== undefined ? { name: patch.name } : {}),
    ...(patch.description !== undefined ? { description: patch.description } : {}),
  };
  if (plan.changes.length === 0) {
    // The schema sent is the current one: only the name and description change, as without one.
    await db.updateTable('datasets').set(names).where('id', '=', datasetId).execute();
    return getDataset(db, caller, datasetId);
  }

  const version = row.schema_version + 1;
  let table = row.records_table;
  if (rewrite && row.records_table !== null) {
    table = `${tablePrefix(datasetId)}v${version}_${randomBytes(4).toString('hex')}`;
    await ledgerBuiltTable(db, datasetId, table);
    try {
      const staging = await records.createStaging(table, tableSchemaOf(plan.schema), undefined, {
        copyFrom: row.records_table,
        copyColumns: plan.schema.properties.map((p, i) => copiedColumn(plan.sources[i], p.type)),
      });
      try {
        await staging.finish();
      } catch (err) {
        await staging.abort();
        throw err;
      }
    } catch (err) {
      await keepBuiltTable(db, table);
      throw err;
    }
  }
  const lastChange = plan.changes.map(describeChange).join('; ');
  let swapped = false;
  let batch: number | null = null;
  try {
    batch = !recordChanges
      ? null
      : await logSchemaChange(
          db,
          records,
          datasetId,
          plan,
          version,
          rewrite ? table : null,
          reported,
          Number(row.record_count),
        );
    swapped = await consoleDb(db)
      .transaction()
      .execute(async (audited) => {
        const trx = asServiceDb(audited);
        const done = await swapGeneration(trx, {
          datasetId,
          from: row,
          table,
          set: { ...names, schema_version: version, ...(rewrite ? { date_last_record_updated: now } : {}) },
        });
        if (!done) return false;
        if (batch !== null) {
          await publishBatch(trx, batch, row.generation + 1);
          await enqueueDatasetChanged(trx, datasetId, row.generation + 1, now);
        }
        if (table !== null && table !== row.records_table) await keepBuiltTable(trx, table);
        await trx
          .updateTable('dataset_schemas')
          .set({
            properties: JSON.stringify(plan.schema.properties),
            primary_key: JSON.stringify(plan.schema.primaryKey),
            last_change: lastChange,
          })
          .where('dataset_id', '=', datasetId)
          .execute();
        await audit(audited, await appActor(trx, caller.appId), 'dataset.schema_changed', {
          workspaceId: row.workspace_id,
          detail: `"${patch.name ?? row.name}" (${datasetId}), schema version ${version}: ${lastChange}`,
        });
        return true;
      });
  } finally {
    if (!swapped && table !== null && table !== row.records_table) {
      await records.dropTable(table);
      await keepBuiltTable(db, table);
    }
    if (!swapped && batch !== null) await discardBatch(db, records, datasetId, batch);
  }
  if (!swapped) {
    throw problem(
      'conflict',
      'The dataset changed (a load or another schema change committed) while this schema change ran; nothing was changed. Send it again.',
      { code: 'dataset_changed_meanwhile' },
    );
  }
  return getDataset(db, caller, datasetId);
}

/**
 * The change log's batch of a schema change (a dataset with a primary key): an event with the new
 * version, schema and changes and, when the records were rewritten (`rewritten`, the new table),
 * every key, since every record reads differently now. Published by the swap.
 */
async function logSchemaChange(
  db: Kysely<Tables>,
  records: RecordStore,
  datasetId: string,
  plan: SchemaChangePlan,
  version: number,
  rewritten: string | null,
  reported: ReportedChange[],
  recordCount: number,
): Promise<number | null> {
  const schema = tableSchemaOf(plan.schema);
  if (schema.primaryKey.length === 0) return null;
  const detail: SchemaChangeDetail = {
    schemaVersion: version,
    schema: plan.schema,
    changes: reported,
  };
  const batch = await openBatch(db, datasetId, 'schemaChanged', detail);
  if (rewritten === null) return batch;
  try {
    await records.captureChanges({
      changesTable: changesTableName(datasetId),
      batch,
      schema,
      table: rewritten,
      previous: null,
      changed: 'all',
      removed: false,
      rows: recordCount,
    });
  } catch (err) {
    await discardBatch(db, records, datasetId, batch);
    throw err;
  }
  return batch;
}

/** What the change feed says of a schema change (its `schemaChanged` entry). */
export interface SchemaChangeDetail {
  schemaVersion: number;
  schema: DatasetSchema;
  changes: ReportedChange[];
}

/** Where a column of the new records table takes its values from in the current one: a default,
 * or a column of the current table, converted as its type's widening says when the type changed. */
function copiedColumn(source: PropertySource | undefined, type: PropertyType): CopiedColumn {
  if (source === undefined) throw new Error('a property of the new schema has no source');
  switch (source.from) {
    case 'value':
      return { from: 'value', value: source.value };
    case 'property': {
      if (source.type === type) return { from: 'column', column: source.name };
      const widening = wideningOf(source.type, type);
      if (widening === undefined) throw new Error(`${source.type} to ${type} is not a widening`);
      return widening.copy(source.name);
    }
  }
}

/** Values held that a change would not keep (only a widening can have any). */
async function notFitting(
  records: RecordStore,
  table: string,
  plan: SchemaChangePlan,
  change: SchemaChange,
): Promise<number> {
  if (change.kind !== 'widened') return 0;
  const bound = wideningOf(change.from, change.to)?.beyond;
  const at = plan.schema.properties.findIndex((p) => p.name === change.property);
  const source = plan.sources[at];
  if (bound === undefined || source?.from !== 'property') return 0;
  return records.countBeyond(table, source.name, bound);
}
