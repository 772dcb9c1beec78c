import type { Db } from '../../src/db/schema.js';
import { newId } from '../../src/shared/ids.js';

/**
 * Folders written straight into the table, as other limit tests insert their rows: thousands in a
 * second, and trees the API no longer makes (deeper than 32, made before the limit).
 */
const ROWS_PER_STATEMENT = 500;

async function insertRows(
  db: Db,
  rows: Array<{
    id: string;
    owner_id: string;
    parent_id: string | null;
    name: string;
    name_key: string;
    created_at: string;
    updated_at: string;
  }>,
) {
  for (let start = 0; start < rows.length; start += ROWS_PER_STATEMENT) {
    await db
      .insertInto('folders')
      .values(rows.slice(start, start + ROWS_PER_STATEMENT))
      .execute();
  }
}

const at = new Date(Date.UTC(2025, 0, 1)).toISOString();

/** `count` top-level folders named `{prefix}{n}`. */
export async function insertFlat(db: Db, ownerId: string, count: number, prefix = 'f'): Promise<void> {
  await insertRows(
    db,
    Array.from({ length: count }, (_, i) => {
      const name = `${prefix}${i}`;
      return {
        id: newId(),
        owner_id: ownerId,
        parent_id: null,
        name,
        name_key: name.toLowerCase(),
        created_at: at,
        updated_at: at,
      };
    }),
  );
}

/** A chain `names[0]/names[1]/…` from the top (or below `parentId`); returns the ids, top first. */
export async function insertChain(
  db: Db,
  ownerId: string,
  names: string[],
  parentId: string | null = null,
): Promise<string[]> {
  const ids = names.map(() => newId());
  await insertRows(
    db,
    names.map((name, i) => ({
      id: ids[i]!,
      owner_id: ownerId,
      parent_id: i === 0 ? parentId : ids[i - 1]!,
      name,
      name_key: name.toLowerCase(),
      created_at: at,
      updated_at: at,
    })),
  );
  return ids;
}
