const MARKER = '/api/attachments/';
const LINK =
  /\/api\/attachments\/([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})(?![0-9a-fA-F-])/g;
/** A version links to at most this many attachments (so no save writes an unbounded number of rows). */
export const REFERENCES_PER_VERSION_MAX = 1000;

/**
 * The attachment ids a version's content links to (`/api/attachments/{id}`, as an image or a
 * link, with or without the origin in front), lower-cased, each once. Most notes have none, and
 * then this is one substring search.
 */
export function linkedAttachments(content: string): string[] {
  if (!content.includes(MARKER)) return [];
  const ids = new Set<string>();
  for (const match of content.matchAll(LINK)) {
    ids.add(match[1]!.toLowerCase());
    if (ids.size >= REFERENCES_PER_VERSION_MAX) break;
  }
  return [...ids];
}

export { linkedByNote, recordReferences } from './attachments.repository.js';
