// Small helpers that let one migration describe a table for both dialects.
import type { ColumnDefinitionBuilder, CreateTableBuilder, Kysely } from 'kysely';

export type EngineKind = 'sqlite' | 'postgres';

/** A numbered migration; `engine` lets it pick the dialect's column types where they differ. */
export interface Migration {
  up(db: Kysely<unknown>, engine: EngineKind): Promise<void>;
}

/** An auto-numbered integer primary key. */
export function withIdColumn<T extends string>(
  table: CreateTableBuilder<T, never>,
  engine: EngineKind,
): CreateTableBuilder<T, 'id'> {
  return engine === 'sqlite'
    ? table.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement())
    : table.addColumn('id', 'integer', (c) => c.primaryKey().generatedByDefaultAsIdentity());
}

/** A required text column. */
export const notNull = (c: ColumnDefinitionBuilder): ColumnDefinitionBuilder => c.notNull();
