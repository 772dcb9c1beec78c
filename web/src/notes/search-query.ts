/**
 * The query as typed, with its last word matching the start of words ("road" finds "roadmap")
 * while it is being typed: not once a space follows it, nor inside an open "phrase", nor for an
 * excluded -word, a tag:name or a word already ending in *.
 */
export function asYouType(query: string): string {
  if (/\s$/.test(query)) return query.trim();
  if ((query.match(/"/g) ?? []).length % 2 === 1) return query;
  return /(^|\s)[^\s"*:-][^\s"*:]*$/.test(query) ? `${query}*` : query;
}
