import { Errors } from '../errors.js';

/** One condition of an If list: a state (lock) token or an entity tag, possibly negated. */
export interface Condition {
  not: boolean;
  token?: string;
  etag?: string;
}

/** A list of conditions that must all hold, for the request's resource or a tagged one (a path). */
export interface IfList {
  resource: string | undefined;
  conditions: Condition[];
}

const malformed = Errors.invalidIfHeader;

/**
 * Parses an If header (RFC 4918 §10.4): untagged lists `(<token> ["etag"])` or tagged ones
 * `<url> (…)`. Tagged resources are returned as written (the caller turns them into paths).
 */
export function parseIf(header: string): IfList[] {
  const lists: IfList[] = [];
  let resource: string | undefined;
  let i = 0;
  const skipSpace = () => {
    while (i < header.length && /\s/.test(header[i]!)) i++;
  };
  const until = (end: string): string => {
    const close = header.indexOf(end, i);
    if (close < 0) throw malformed();
    const value = header.slice(i, close);
    i = close + 1;
    return value;
  };
  skipSpace();
  while (i < header.length) {
    if (header[i] === '<') {
      i++;
      resource = until('>');
    } else if (header[i] === '(') {
      i++;
      const conditions: Condition[] = [];
      for (;;) {
        skipSpace();
        if (header[i] === ')') {
          i++;
          break;
        }
        let not = false;
        if (/^not\b/i.test(header.slice(i, i + 4)) && /\s|<|\[/.test(header[i + 3] ?? '')) {
          not = true;
          i += 3;
          skipSpace();
        }
        if (header[i] === '<') {
          i++;
          conditions.push({ not, token: until('>') });
        } else if (header[i] === '[') {
          i++;
          conditions.push({ not, etag: until(']') });
        } else {
          throw malformed();
        }
      }
      if (conditions.length === 0) throw malformed();
      lists.push({ resource, conditions });
    } else {
      throw malformed();
    }
    skipSpace();
  }
  if (lists.length === 0) throw malformed();
  return lists;
}

/** Every state token the header names: these are the locks the client says it holds. */
export const submittedTokens = (lists: IfList[]): Set<string> =>
  new Set(lists.flatMap((list) => list.conditions.flatMap((c) => (c.token === undefined ? [] : [c.token]))));

/** Entity tags compare strongly, ignoring a weak prefix on either side. */
export const sameEtag = (a: string, b: string): boolean => a.replace(/^W\//, '') === b.replace(/^W\//, '');
