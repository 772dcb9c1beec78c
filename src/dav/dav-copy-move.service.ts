import { Errors } from '../errors.js';
import { lockPathOf, pathOfUrl, segmentsOf, type Segments } from './dav-path.js';
import { checkMatch, checkWrite, dropLocksAt } from './dav-conditions.js';
import type { DavNotice } from './dav-notify.js';
import type { DavHeaders } from './dav-request.js';
import { copy, move, type DavServices } from './dav.service.js';
import { isCollection, locate } from './tree.js';

/**
 * COPY and MOVE to the Destination header's path: 201 when nothing was there, 204 when something
 * was replaced. A MOVE takes the locks on what it moved away with it.
 */
export async function davCopyMove(
  s: DavServices, ownerId: string, segments: Segments, headers: DavHeaders, moving: boolean,
): Promise<{ status: 201 | 204; notice: DavNotice }> {
  const located = await locate(s.db, ownerId, segments);
  const source = located.entry;
  if (source === undefined) throw Errors.davNotFound();
  if (headers.destination === undefined) throw Errors.invalidDavRequest('COPY and MOVE need a Destination header');
  const target = segmentsOf(pathOfUrl(headers.destination));
  const from = lockPathOf(segments);
  const to = lockPathOf(target);
  if (target.join('/') === segments.join('/')) throw Errors.davForbidden('The destination is the source');
  if (isCollection(source) && (from === '' || to.startsWith(`${from}/`))) throw Errors.davForbidden('A folder cannot be copied or moved into itself');
  const depth = headers.depth;
  if (isCollection(source) && depth !== undefined && depth !== 'infinity' && (moving || depth !== '0')) {
    throw Errors.invalidDavRequest('Depth must be infinity (or 0 for COPY)');
  }
  const dest = await locate(s.db, ownerId, target);
  if (dest.parent === undefined) throw Errors.davNoParent();
  const existing = dest.entry !== undefined && dest.entry.id !== source.id ? dest.entry : undefined;
  const overwrite = (headers.overwrite ?? 'T').trim().toUpperCase();
  if (overwrite !== 'T' && overwrite !== 'F') throw Errors.invalidDavRequest('Overwrite must be T or F');
  if (existing !== undefined && overwrite === 'F') throw Errors.davPreconditionFailed();
  checkMatch(headers, source, false);
  const locks = await checkWrite(s.db, headers, ownerId, located, [
    { segments: target, tree: true }, ...(moving ? [{ segments, tree: true }] : []),
  ]);
  const status = existing === undefined ? 201 : 204;
  if (moving) {
    await move(s, ownerId, source, dest.parent, target.at(-1)!, dest.entry);
    const moved = (await locate(s.db, ownerId, target)).entry;
    await dropLocksAt(s.db, ownerId, locks, from);
    return { status, notice: { kind: 'move', source, moved } };
  }
  await copy(s, ownerId, source, segments, dest.parent, target.at(-1)!, existing, depth !== '0');
  const copied = (await locate(s.db, ownerId, target)).entry;
  return { status, notice: { kind: 'copy', copied } };
}
