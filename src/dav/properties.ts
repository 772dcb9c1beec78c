import { INLINE_TYPES } from '../attachments/content-type.js';
import type { Db } from '../db/schema.js';
import { hrefOf, lockPathOf, type Segments } from './dav-path.js';
import * as repo from './dav.repository.js';
import { etagOf } from './dav.service.js';
import { activeLock, covering, SUPPORTED_LOCK, type LockRow } from './locks.js';
import type { Entry } from './tree.js';
import { DAV, davText, emptyElement, escapeXml } from './xml.js';

/** What a PROPFIND asks for. */
export type PropfindRequest =
  | { kind: 'allprop' }
  | { kind: 'propname' }
  | { kind: 'prop'; names: Array<{ ns: string; name: string }> };

/** The live properties every resource can have, in the order they are listed. */
export const LIVE = [
  'creationdate',
  'displayname',
  'getlastmodified',
  'resourcetype',
  'getetag',
  'getcontentlength',
  'getcontenttype',
  'supportedlock',
  'lockdiscovery',
] as const;
const LIVE_SET: ReadonlySet<string> = new Set(LIVE);
export const isLive = (ns: string, name: string): boolean => ns === DAV && LIVE_SET.has(name);

/** The Content-Type GET answers with for an entry. */
export function contentTypeOf(entry: Entry): string | undefined {
  if (entry.kind === 'note') return 'text/markdown; charset=utf-8';
  if (entry.kind === 'file')
    return INLINE_TYPES.has(entry.content_type) ? entry.content_type : 'application/octet-stream';
  return undefined;
}

/** The value of one live property of an entry, as XML, or undefined when the entry has none. */
function live(name: string, entry: Entry, path: Segments, locks: LockRow[], now: number): string | undefined {
  const collection = entry.kind === 'root' || entry.kind === 'folder';
  switch (name) {
    case 'creationdate':
      return davText(name, entry.created_at);
    case 'displayname':
      return davText(name, entry.name);
    case 'getlastmodified':
      return davText(name, new Date(entry.updated_at).toUTCString());
    case 'resourcetype':
      return collection ? '<D:resourcetype><D:collection/></D:resourcetype>' : '<D:resourcetype/>';
    case 'getetag': {
      const etag = etagOf(entry);
      return etag === undefined ? undefined : davText(name, etag);
    }
    case 'getcontentlength':
      return collection
        ? undefined
        : davText(name, String(entry.kind === 'note' || entry.kind === 'file' ? entry.size : 0));
    case 'getcontenttype': {
      const type = contentTypeOf(entry);
      return type === undefined ? undefined : davText(name, type);
    }
    case 'supportedlock':
      return `<D:supportedlock>${SUPPORTED_LOCK}</D:supportedlock>`;
    case 'lockdiscovery':
      return `<D:lockdiscovery>${covering(locks, lockPathOf(path))
        .map((lock) => activeLock(lock, now))
        .join('')}</D:lockdiscovery>`;
    default:
      return undefined;
  }
}

function propstat(props: string[], status: string): string {
  return props.length === 0
    ? ''
    : `<D:propstat><D:prop>${props.join('')}</D:prop><D:status>HTTP/1.1 ${status}</D:status></D:propstat>`;
}

/** One DAV:response of a PROPFIND multistatus for each entry. */
export async function propfindResponses(
  db: Db,
  request: PropfindRequest,
  items: Array<{ entry: Entry; segments: Segments }>,
  locks: LockRow[],
): Promise<string> {
  const now = Date.now();
  const dead = new Map<string, Array<{ namespace: string; name: string; value: string }>>();
  for (const row of await repo.properties(
    db,
    items.map((i) => i.entry.id),
  )) {
    const list = dead.get(row.resource_id) ?? [];
    list.push(row);
    dead.set(row.resource_id, list);
  }
  return items
    .map(({ entry, segments }) => {
      const own = dead.get(entry.id) ?? [];
      const found: string[] = [];
      const missing: string[] = [];
      if (request.kind === 'propname') {
        for (const name of LIVE)
          if (live(name, entry, segments, locks, now) !== undefined) found.push(emptyElement(DAV, name));
        for (const p of own) found.push(emptyElement(p.namespace, p.name));
      } else if (request.kind === 'allprop') {
        for (const name of LIVE) {
          const value = live(name, entry, segments, locks, now);
          if (value !== undefined) found.push(value);
        }
        for (const p of own) found.push(p.value);
      } else {
        for (const { ns, name } of request.names) {
          const value = ns === DAV ? live(name, entry, segments, locks, now) : undefined;
          const stored = value ?? own.find((p) => p.namespace === ns && p.name === name)?.value;
          if (stored === undefined) missing.push(emptyElement(ns, name));
          else found.push(stored);
        }
      }
      const collection = entry.kind === 'root' || entry.kind === 'folder';
      return `<D:response><D:href>${escapeXml(hrefOf(segments, collection))}</D:href>${propstat(found, '200 OK')}${propstat(missing, '404 Not Found')}</D:response>`;
    })
    .join('');
}
