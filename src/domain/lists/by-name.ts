// The lists that page by keyset in name order and are searched by name: a workspace's datasets in
// the console, the operator's workspaces and apps. A page after the last one's (name, id), so a
// later page costs what the first does, whatever the list's length.
import { sql, type RawBuilder, type SelectQueryBuilder } from 'kysely';

/** Where a page ends: the name and ID of its last item. */
export interface NamePosition {
  name: string;
  id: string | number;
}

/** Which page of a list: its items' names hold `nameContains` ('' for all), after `after`. */
export interface NamePageQuery {
  nameContains: string;
  after: NamePosition | null;
  limit: number;
}

/** Whether `column` holds `text` in any letter case (ASCII letters on SQLite, whose lower() knows
 * no other); `%`, `_` and `\` are themselves, not patterns. */
export function nameHolds(column: string, text: string): RawBuilder<boolean> {
  const pattern = `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
  return sql<boolean>`lower(${sql.ref(column)}) like lower(${pattern}) escape '\\'`;
}

/** Whether a row comes after `at` in (name, id) order. */
function afterPosition(nameColumn: string, idColumn: string, at: NamePosition): RawBuilder<boolean> {
  return sql<boolean>`(${sql.ref(nameColumn)}, ${sql.ref(idColumn)}) > (${at.name}, ${at.id})`;
}

/** The page of rows read with one more than `limit`, and where the next page starts (null: none). */
function namePage<R>(
  rows: R[],
  limit: number,
  positionOf: (row: R) => NamePosition,
): { rows: R[]; next: NamePosition | null } {
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  return { rows: page, next: rows.length > limit && last !== undefined ? positionOf(last) : null };
}

/** Reads the page `page` asks for of what `query` selects, by its `name` and `id` columns. */
export async function readNamePage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  columns: { name: string; id: string },
  page: NamePageQuery,
  positionOf: (row: O) => NamePosition,
): Promise<{ rows: O[]; next: NamePosition | null }> {
  let q = query;
  if (page.nameContains !== '') q = q.where(nameHolds(columns.name, page.nameContains));
  if (page.after !== null) q = q.where(afterPosition(columns.name, columns.id, page.after));
  const rows = await q
    .orderBy(sql.ref(columns.name))
    .orderBy(sql.ref(columns.id))
    .limit(page.limit + 1)
    .execute();
  return namePage(rows, page.limit, positionOf);
}
