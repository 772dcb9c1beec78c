import { ALLOW_COLLECTION } from './dav-methods.js';
import { Errors } from '../errors.js';
import { CONTENT_MAX_BYTES } from '../notes/version-rules.js';
import { lockPathOf, type Segments } from './dav-path.js';
import { checkMatch, checkWrite, dropLocksAt } from './dav-conditions.js';
import { XML_MAX_BYTES, type DavBody, type DavHeaders } from './dav-request.js';
import { etagOf, mkcol, put, remove, type DavServices } from './dav.service.js';
import { locate } from './tree.js';

/** PUT: 201 for a new note or file, 204 for a new content; the ETag it has now. */
export async function davPut(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
  body: DavBody,
): Promise<{ status: 201 | 204; etag: string | undefined }> {
  const located = await locate(s.db, ownerId, segments);
  const parent = located.parent;
  if (parent === undefined)
    throw segments.length === 0 ? Errors.davForbidden('The top level is a collection') : Errors.davNoParent();
  checkMatch(headers, located.entry, false);
  await checkWrite(s.db, headers, ownerId, located, [{ segments, tree: false }]);
  const expected = headers.ifMatch !== undefined && located.entry?.kind === 'note' ? located.entry.version : undefined;
  const outcome = await put(
    s,
    ownerId,
    parent,
    segments.at(-1)!,
    located.entry,
    body.stream(),
    () => body.bytes(CONTENT_MAX_BYTES, Errors.davNoteTooLarge),
    expected,
  );
  const now = (await locate(s.db, ownerId, segments)).entry;
  return { status: outcome === 'created' ? 201 : 204, etag: now === undefined ? undefined : etagOf(now) };
}

/** DELETE, and the locks on what it took away. */
export async function davDelete(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
): Promise<void> {
  const located = await locate(s.db, ownerId, segments);
  const entry = located.entry;
  if (entry === undefined) throw Errors.davNotFound();
  checkMatch(headers, entry, false);
  const locks = await checkWrite(s.db, headers, ownerId, located, [{ segments, tree: true }]);
  await remove(s, ownerId, entry);
  await dropLocksAt(s.db, ownerId, locks, lockPathOf(segments));
}

/** MKCOL: a folder, from a request without a body. */
export async function davMkcol(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
  body: DavBody,
): Promise<void> {
  const located = await locate(s.db, ownerId, segments);
  const bytes = await body.bytes(XML_MAX_BYTES, Errors.mkcolBody);
  if (bytes.length > 0) throw Errors.mkcolBody();
  if (located.entry !== undefined) throw Errors.davPathTaken(ALLOW_COLLECTION);
  if (located.parent === undefined) throw Errors.davNoParent();
  await checkWrite(s.db, headers, ownerId, located, [{ segments, tree: false }]);
  await mkcol(s, ownerId, located.parent, segments.at(-1)!);
}
