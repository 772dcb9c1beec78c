import * as attachments from '../attachments/attachments.service.js';
import { Errors } from '../errors.js';
import { getNote } from '../notes/notes.service.js';
import { hrefOf, type Segments } from './dav-path.js';
import { checkMatch, checkWrite, ifLists } from './dav-conditions.js';
import type { DavBody, DavHeaders } from './dav-request.js';
import * as repo from './dav.repository.js';
import { etagOf, type DavServices } from './dav.service.js';
import { contentTypeOf, propfindResponses, type PropfindRequest } from './properties.js';
import { folderIdOf, isCollection, listChildren, locate } from './tree.js';
import { child, DAV, elements, escapeXml, is } from './xml.js';

/** Each name is looked up for every resource of a Depth: 1 answer: bounded like PROPPATCH's changes. */
const MAX_PROPERTY_NAMES = 200;

/** What a GET (or HEAD) answers with; a note's and a file's answers carry their Last-Modified. */
export type GetOutcome =
  | { kind: 'listing'; html: string }
  | { kind: 'not-modified'; lastModified: string; etag: string }
  | {
      kind: 'file';
      lastModified: string;
      etag: string;
      file: { sha256: string; content_type: string; filename: string; size: number; storage_key: string };
    }
  | { kind: 'note'; lastModified: string; etag: string; contentType: string; bytes: Buffer };

/** GET and HEAD: a note's text, a file's bytes, or a collection as a small HTML listing. */
export async function davGet(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
): Promise<GetOutcome> {
  const located = await locate(s.db, ownerId, segments);
  const entry = located.entry;
  if (entry === undefined) throw Errors.davNotFound();
  if (ifLists(headers) !== undefined) await checkWrite(s.db, headers, ownerId, located, []);
  if (entry.kind !== 'note' && entry.kind !== 'file') {
    const children = await listChildren(s.db, ownerId, folderIdOf(entry));
    const items = children.map(
      (c) =>
        `<li><a href="${escapeXml(hrefOf([...segments, c.name], isCollection(c)))}">${escapeXml(c.name)}${isCollection(c) ? '/' : ''}</a></li>`,
    );
    return {
      kind: 'listing',
      html: `<!doctype html><meta charset="utf-8"><title>${escapeXml(entry.name || 'Vellum')}</title><ul>${items.join('')}</ul>`,
    };
  }
  const lastModified = new Date(entry.updated_at).toUTCString();
  const etag = etagOf(entry)!;
  if (
    checkMatch(headers, entry, true, () => Errors.davPreconditionFailed({ 'last-modified': lastModified })) ===
    'not-modified'
  ) {
    return { kind: 'not-modified', lastModified, etag };
  }
  if (entry.kind === 'file') {
    const row = await attachments.find(s.attachments, ownerId, entry.attachment_id);
    return { kind: 'file', lastModified, etag, file: { ...row, size: Number(row.size) } };
  }
  const bytes = Buffer.from((await getNote(s.db, ownerId, entry.id)).content, 'utf8');
  return { kind: 'note', lastModified, etag, contentType: contentTypeOf(entry)!, bytes };
}

/** PROPFIND at Depth 0 or 1: the inside of the multistatus. */
export async function davPropfind(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
  body: DavBody,
): Promise<string> {
  const located = await locate(s.db, ownerId, segments);
  const entry = located.entry;
  if (entry === undefined) throw Errors.davNotFound();
  const depth = headers.depth;
  if (depth !== '0' && depth !== '1') throw Errors.propfindFiniteDepth();
  const xml = await body.xml();
  let asked: PropfindRequest = { kind: 'allprop' };
  if (xml !== undefined) {
    if (!is(xml, DAV, 'propfind')) throw Errors.invalidDavRequest('The body must be a DAV:propfind element');
    const prop = child(xml, DAV, 'prop');
    if (prop !== undefined) {
      const names = elements(prop);
      if (names.length > MAX_PROPERTY_NAMES)
        throw Errors.invalidDavRequest(`A PROPFIND may ask for at most ${MAX_PROPERTY_NAMES} properties`);
      asked = { kind: 'prop', names: names.map((p) => ({ ns: p.ns, name: p.name })) };
    } else if (child(xml, DAV, 'propname') !== undefined) asked = { kind: 'propname' };
    else if (child(xml, DAV, 'allprop') === undefined)
      throw Errors.invalidDavRequest('DAV:propfind must hold DAV:prop, DAV:propname or DAV:allprop');
  }
  const items = [{ entry, segments }];
  if (depth === '1' && isCollection(entry)) {
    for (const c of await listChildren(s.db, ownerId, folderIdOf(entry)))
      items.push({ entry: c, segments: [...segments, c.name] });
  }
  const locks = await repo.liveLocks(s.db, ownerId, new Date().toISOString());
  return propfindResponses(s.db, asked, items, locks);
}
