// A workspace member's role: a closed set, each with what it may do in the console.

/** Most powerful first: pages that want the least powerful first (the invitation form) reverse it. */
export const CONSOLE_ROLES = ['owner', 'admin', 'viewer'] as const;
export type ConsoleRole = (typeof CONSOLE_ROLES)[number];

export interface RolePowers {
  /** May change anything in the workspace (invite members, later: apps, datasets, the key). */
  canChange: boolean;
  /** The roles this role may invite. */
  mayInvite: readonly ConsoleRole[];
  /** May rotate the Workspace Key (it stops every app at once: an owner's decision). */
  rotatesKey: boolean;
  /** May change members' roles and remove members. */
  managesMembers: boolean;
  /** May rename the workspace (its name is what apps and people know it by). */
  renamesWorkspace: boolean;
  /** Shown to people. */
  label: string;
}

/** What each role may do; a new role fails to compile until it is given its powers. */
export const ROLE_POWERS: Record<ConsoleRole, RolePowers> = {
  owner: {
    canChange: true,
    mayInvite: ['owner', 'admin', 'viewer'],
    rotatesKey: true,
    managesMembers: true,
    renamesWorkspace: true,
    label: 'Owner',
  },
  admin: {
    canChange: true,
    mayInvite: ['admin', 'viewer'],
    rotatesKey: false,
    managesMembers: false,
    renamesWorkspace: false,
    label: 'Admin',
  },
  viewer: {
    canChange: false,
    mayInvite: [],
    rotatesKey: false,
    managesMembers: false,
    renamesWorkspace: false,
    label: 'Viewer',
  },
};

/** Narrows a stored or submitted role; null when it is none of the set. */
export function asConsoleRole(value: unknown): ConsoleRole | null {
  return typeof value === 'string' && (CONSOLE_ROLES as readonly string[]).includes(value)
    ? (value as ConsoleRole)
    : null;
}
