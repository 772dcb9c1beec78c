import { Errors } from '../errors.js';

/**
 * If-Match (RFC 9110 §13.1.1) against ETags of the form "<version>". Returns the versions that
 * qualify, undefined for no precondition ("*" or no header). Comparison is strong and exact: weak
 * tags and well-formed tags that no version has (like "01" or "abc") never match, so a list of
 * only those yields [] and the write is refused with 412. Anything that is not a tag is 400.
 */
export function parseIfMatch(header: string | undefined): number[] | undefined {
  if (header === undefined) return undefined;
  const trimmed = header.trim();
  if (trimmed === '*') return undefined;
  const versions: number[] = [];
  for (const part of trimmed.split(',')) {
    const tag = part.trim();
    const strong = /^"([^"]*)"$/.exec(tag);
    if (strong !== null) {
      if (/^[1-9]\d{0,8}$/.test(strong[1]!)) versions.push(Number(strong[1]));
    } else if (!/^W\/"[^"]*"$/.test(tag)) {
      throw Errors.validation('If-Match must be an entity tag from GET /api/notes/{id}, like "3"');
    }
  }
  return versions;
}
