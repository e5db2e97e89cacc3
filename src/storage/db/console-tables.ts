// Row shapes of the web console's tables (migration 013), kept beside tables.ts rather than in it:
// the console reaches them through `db.withTables<ConsoleTables>()`, so the rest of the service
// does not see them.
import type { Generated, Selectable } from 'kysely';

export interface ConsoleAccountsTable {
  id: Generated<number>;
  /** Lower case. */
  email: string;
  display_name: string;
  /** scrypt hash (domain/console/passwords.ts); null until an invitation is accepted. */
  password_hash: string | null;
  /** 1 for the service's operator, else 0. */
  is_operator: Generated<number>;
  created_at: string;
  /** When the operator disabled the account (it cannot sign in), null while it is enabled. */
  disabled_at: string | null;
}

export interface ConsoleMembershipsTable {
  account_id: number;
  workspace_id: number;
  /** `owner`, `admin` or `viewer` (CONSOLE_ROLES). */
  role: string;
  created_at: string;
}

export interface ConsoleInvitationsTable {
  token_hash: string;
  account_id: number;
  workspace_id: number | null;
  role: string | null;
  /** Epoch milliseconds. */
  expires_at: number;
  used_at: string | null;
  created_at: string;
  /** Who made it, as the audit log names them (an email, or `cli`); null for older rows. */
  invited_by: string | null;
}

export interface ConsolePasswordResetsTable {
  token_hash: string;
  account_id: number;
  /** Epoch milliseconds. */
  expires_at: number;
  used_at: string | null;
  created_at: string;
}

export interface ConsoleSessionsTable {
  id_hash: string;
  account_id: number;
  /** Epoch milliseconds. */
  created_ms: number;
  /** Epoch milliseconds. */
  last_seen_ms: number;
}

/** Attempts counted per key (hashed) in a window of its own (domain/console/rate-windows.ts). */
export interface ConsoleRateWindowsTable {
  key: string;
  count: number;
  /** Epoch milliseconds: the end of the key's window. */
  window_end_ms: number;
}

export interface ConsoleAuditTable {
  id: Generated<number>;
  at: string;
  account_id: number | null;
  actor: string;
  action: string;
  workspace_id: number | null;
  detail: string | null;
}

// A type alias, not an interface: Kysely's withTables wants an index-signature-compatible record.
export type ConsoleTables = {
  console_accounts: ConsoleAccountsTable;
  console_memberships: ConsoleMembershipsTable;
  console_invitations: ConsoleInvitationsTable;
  console_sessions: ConsoleSessionsTable;
  console_rate_windows: ConsoleRateWindowsTable;
  console_audit: ConsoleAuditTable;
  console_password_resets: ConsolePasswordResetsTable;
};

export type ConsoleAccountRow = Selectable<ConsoleAccountsTable>;
export type ConsoleAuditRow = Selectable<ConsoleAuditTable>;
