// Exports of superseded generations: kept while their signed download links may still be used,
// then deleted by the next records:retrieve of the dataset.
import { objectKeys, type ObjectStore } from '../../storage/objects/index.js';

/** Exports of older generations stay as long as their signed download links are valid. */
export const OLD_EXPORT_GRACE_MS = 60 * 60 * 1000;

/** Deletes exports of generations older than the dataset's current one, once their links expired. */
export async function deleteOldExports(
  objects: ObjectStore,
  datasetId: string,
  currentGeneration: number,
  now = Date.now(),
): Promise<void> {
  for (const obj of await objects.list(objectKeys.exportsOf(datasetId))) {
    const generation = Number(obj.key.split('/').pop()?.split('.')[0]);
    if (generation < currentGeneration && obj.lastModified.getTime() < now - OLD_EXPORT_GRACE_MS) {
      await objects.delete(obj.key);
    }
  }
}
