/**
 * If-Match (RFC 9110 §13.1.1) against ETags of the form "<version>", once the header schema
 * (IF_MATCH_PATTERN: `*` or a list of entity tags) has accepted it. Returns the versions that
 * qualify, undefined for no precondition ("*" or no header). Comparison is strong and exact: weak
 * tags and well-formed tags that no version has (like "01" or "abc") never match, so a list of
 * only those yields [] and the write is refused with 412.
 */
export function ifMatchVersions(header: string | undefined): number[] | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const versions: number[] = [];
  for (const [, weak, tag] of header.matchAll(/(W\/)?"([^"]*)"/g)) {
    if (weak === undefined && /^[1-9]\d{0,8}$/.test(tag!)) versions.push(Number(tag));
  }
  return versions;
}
