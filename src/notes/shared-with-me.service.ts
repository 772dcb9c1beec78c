import type { Db } from '../db/schema.js';
import { sharedWith } from '../members/members.repository.js';
import type { Page } from '../shared/page.js';
import { decodeTags } from '../tags/extract.js';
import { previewsOf } from './preview.js';

/** The caller's "Shared with me": list rows of the notes others shared with them, with owner and role. */
export async function sharedWithMe(db: Db, userId: string, page: Page) {
  const rows = await sharedWith(db, userId, page);
  const previews = await previewsOf(db, rows);
  return rows.map(({ version_id: _, ...row }, i) => ({ ...row, tags: decodeTags(row.tags), preview: previews[i]! }));
}
