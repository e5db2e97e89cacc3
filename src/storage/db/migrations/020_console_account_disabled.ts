// The operator disables a console account instead of deleting it: the account keeps its history
// (audit rows, who invited whom) and can be enabled again; while disabled it cannot sign in.
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema.alterTable('console_accounts').addColumn('disabled_at', 'text').execute();
  },
};
