// Dataset tags: one per app allowed to see a dataset. Only apps connected to the workspace qualify.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { DatasetRow, Tables } from '../../storage/db/tables.js';
import { problem } from '../../errors.js';
import { nowTimestamp } from '../../lib/time.js';
import { appIdFields, type AppIdFields } from '../identity/app-id.js';
import type { Db } from '../identity/users.js';
import type { DatasetTag } from './view.js';
import { appActor, audit } from '../console/audit.js';
import { asServiceDb, consoleDb } from '../console/db.js';

/** An app connected to a workspace, as GET /datasets/tags lists it. */
export interface TagApp extends AppIdFields {
  appName: string;
}

/** The apps connected to a workspace (the tags its datasets may carry). */
export async function connectedApps(db: Db, workspaceId: number): Promise<TagApp[]> {
  const rows = await db
    .selectFrom('installations as i')
    .innerJoin('apps as a', 'a.id', 'i.app_id')
    .select(['a.id', 'a.name'])
    .where('i.workspace_id', '=', workspaceId)
    .orderBy('i.id')
    .execute();
  return rows.map((r) => ({ appName: r.name, ...appIdFields(r.id) }));
}

/** Tags a dataset with an app; tagging twice returns the existing tag. */
export async function tagDataset(db: Db, datasetId: string, appId: string): Promise<DatasetTag> {
  await db
    .insertInto('dataset_tags')
    .values({ id: randomUUID(), dataset_id: datasetId, app_id: appId, created_at: nowTimestamp() })
    .onConflict((oc) => oc.columns(['dataset_id', 'app_id']).doNothing())
    .execute();
  const row = await db
    .selectFrom('dataset_tags as t')
    .innerJoin('apps as a', 'a.id', 't.app_id')
    .select(['t.id', 't.dataset_id', 't.app_id', 'a.name'])
    .where('t.dataset_id', '=', datasetId)
    .where('t.app_id', '=', appId)
    .executeTakeFirstOrThrow();
  return { datasetTagId: row.id, name: row.name, datasetId: row.dataset_id, ...appIdFields(row.app_id) };
}

/** Tags a visible dataset with another app connected to the same workspace. */
export async function addTag(
  db: Db,
  workspaceId: number,
  datasetId: string,
  appId: string,
): Promise<DatasetTag> {
  const connected = await connectedApps(db, workspaceId);
  if (!connected.some((a) => a.platformAppId === appId)) {
    throw problem('invalid', `App ${appId} is not connected to this workspace.`, {
      errors: { platformAppId: ['not connected to this workspace'] },
    });
  }
  return tagDataset(db, datasetId, appId);
}

/** Removes one tag of a dataset. */
export async function removeTag(db: Db, datasetId: string, datasetTagId: string): Promise<void> {
  const result = await db
    .deleteFrom('dataset_tags')
    .where('id', '=', datasetTagId)
    .where('dataset_id', '=', datasetId)
    .executeTakeFirst();
  if (result.numDeletedRows === 0n) throw problem('notFound', `Dataset tag ${datasetTagId} not found.`);
}

/**
 * Removes one tag of a dataset at an app's request (DELETE /datasets/:id/tags/:datasetTagId). Any
 * app that sees the dataset may remove any of its tags, as DXAPI allows. When that is the tag of
 * the app that created the dataset, removed by another app, the creator loses access and cannot
 * get it back itself: the removal is written to the workspace's audit log, in the same
 * transaction, where the workspace's owners see it and can tag the app again (docs/api.md).
 */
export async function removeTagAsApp(
  db: Kysely<Tables>,
  caller: { appId: string },
  dataset: DatasetRow,
  datasetTagId: string,
): Promise<void> {
  await consoleDb(db)
    .transaction()
    .execute(async (trx) => {
      const tag = await trx
        .selectFrom('dataset_tags as t')
        .innerJoin('apps as a', 'a.id', 't.app_id')
        .select(['t.app_id', 'a.name'])
        .where('t.id', '=', datasetTagId)
        .where('t.dataset_id', '=', dataset.id)
        .executeTakeFirst();
      await removeTag(asServiceDb(trx), dataset.id, datasetTagId);
      if (tag === undefined || tag.app_id !== dataset.created_by_app_id || caller.appId === tag.app_id)
        return;
      await audit(trx, await appActor(asServiceDb(trx), caller.appId), 'dataset.creator_untagged', {
        workspaceId: dataset.workspace_id,
        detail:
          `"${dataset.name}" (${dataset.id}): ${tag.name} (${appIdFields(tag.app_id).platformAppId}), ` +
          'which created it, can no longer see it',
      });
    });
}

/** The tags of one dataset, oldest first. */
export async function tagsOf(db: Db, datasetId: string): Promise<DatasetTag[]> {
  const rows = await db
    .selectFrom('dataset_tags as t')
    .innerJoin('apps as a', 'a.id', 't.app_id')
    .select(['t.id', 't.dataset_id', 't.app_id', 'a.name'])
    .where('t.dataset_id', '=', datasetId)
    .orderBy('t.created_at')
    .orderBy('t.id')
    .execute();
  return rows.map((r) => ({
    datasetTagId: r.id,
    name: r.name,
    datasetId: r.dataset_id,
    ...appIdFields(r.app_id),
  }));
}

/**
 * Makes a dataset's tags exactly `appIds` (the console's list of checkboxes), one addTag or
 * removeTag per difference, as the API's tag routes do; returns the tags added and removed.
 * A tag of an app no longer connected may stay or go, but a new tag needs a connected app.
 */
export async function setDatasetTags(
  db: Db,
  workspaceId: number,
  datasetId: string,
  appIds: readonly string[],
): Promise<{ added: DatasetTag[]; removed: DatasetTag[] }> {
  const wanted = new Set(appIds);
  const current = await tagsOf(db, datasetId);
  const had = new Set(current.map((t) => t.platformAppId));
  const removed = current.filter((t) => !wanted.has(t.platformAppId));
  for (const tag of removed) await removeTag(db, datasetId, tag.datasetTagId);
  const added: DatasetTag[] = [];
  for (const appId of wanted)
    if (!had.has(appId)) added.push(await addTag(db, workspaceId, datasetId, appId));
  return { added, removed };
}
