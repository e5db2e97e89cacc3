// Access tokens remember the app key whose JWT minted them (nested tokens inherit their parent's),
// so revoking a leaked key stops its tokens at once. Tokens minted before this column existed
// have no key recorded and run out on their own within the hour they were given.
import type { Migration } from './helpers.js';

export const migration: Migration = {
  async up(db) {
    await db.schema.alterTable('access_tokens').addColumn('app_key_kid', 'text').execute();
  },
};
