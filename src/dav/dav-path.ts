import { Errors } from '../errors.js';

export const DAV_PREFIX = '/dav';

const badPath = Errors.invalidDavPath;

/** A path below /dav/ as decoded names; [] is the top level. */
export type Segments = string[];

/**
 * The names in a request path below /dav/. Percent-escapes are decoded once; empty segments
 * (doubled or trailing slashes) are dropped; `.`, `..` and control characters are refused.
 */
export function segmentsOf(path: string): Segments {
  if (path !== DAV_PREFIX && !path.startsWith(`${DAV_PREFIX}/`)) throw badPath('The path must be below /dav/');
  const segments: Segments = [];
  for (const raw of path.slice(DAV_PREFIX.length).split('/')) {
    if (raw === '') continue;
    let name: string;
    try {
      name = decodeURIComponent(raw);
    } catch {
      throw badPath('The path has a malformed percent-escape');
    }
    if (name === '.' || name === '..' || /[\p{Cc}/\\]/u.test(name))
      throw badPath('The path has a name no file can have');
    if (!name.isWellFormed()) throw badPath('The path is not valid Unicode');
    segments.push(name);
  }
  return segments;
}

/** The path part of a request URL or a Destination header (absolute URL or absolute path). */
export function pathOfUrl(url: string): string {
  const withoutQuery = url.split(/[?#]/, 1)[0]!;
  if (withoutQuery.startsWith('/')) return withoutQuery;
  try {
    return new URL(url).pathname;
  } catch {
    throw badPath('The Destination header is not a URL');
  }
}

export function hrefOf(segments: Segments, collection: boolean): string {
  const path = segments.map(encodeURIComponent).join('/');
  return `${DAV_PREFIX}/${path}${collection && segments.length > 0 ? '/' : ''}`;
}

/** The key locks are stored under: the names joined by `/`, compared ignoring case as names are. */
export const lockPathOf = (segments: Segments): string =>
  segments.map((s) => s.normalize('NFC').toLowerCase()).join('/');

/** NFC and lower case: names in one folder are unique under this key, as on case-insensitive disks. */
export const nameKey = (name: string): string => name.normalize('NFC').toLowerCase();
