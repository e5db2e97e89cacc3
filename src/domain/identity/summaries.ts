// The creator and workspace summaries of many rows at once: one query each, whatever the count.
import type { Db, UserSummary } from './users.js';
import type { WorkspaceSummary } from './workspaces.js';

/** Rows that name a creating user and a workspace (datasets, jobs). */
export interface OwnedRow {
  created_by_user_id: number;
  workspace_id: number;
}

/** Lookups from id to public summary for the users and workspaces the rows name. */
export interface Summaries {
  users: Map<number, UserSummary>;
  workspaces: Map<number, WorkspaceSummary>;
}

/** Loads the summaries of every creator and workspace the rows name. */
export async function summariesOf(db: Db, rows: OwnedRow[]): Promise<Summaries> {
  const [users, workspaces] = await Promise.all([
    db
      .selectFrom('users')
      .select(['id', 'display_name', 'email'])
      .where('id', 'in', [...new Set(rows.map((r) => r.created_by_user_id))])
      .execute(),
    db
      .selectFrom('workspaces')
      .select(['id', 'display_name'])
      .where('id', 'in', [...new Set(rows.map((r) => r.workspace_id))])
      .execute(),
  ]);
  return {
    users: new Map(users.map((u) => [u.id, { userId: u.id, displayName: u.display_name, email: u.email }])),
    workspaces: new Map(workspaces.map((w) => [w.id, { workspaceId: w.id, displayName: w.display_name }])),
  };
}
