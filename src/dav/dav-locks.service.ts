import { Errors } from '../errors.js';
import { newId } from '../shared/ids.js';
import { lockPathOf, type Segments } from './dav-path.js';
import { ifHolds, ifLists } from './dav-conditions.js';
import { NO_BODY, type DavBody, type DavHeaders } from './dav-request.js';
import * as repo from './dav.repository.js';
import { put, type DavServices } from './dav.service.js';
import { submittedTokens } from './if-header.js';
import { activeLock, below, covering, parseTimeout, TOKEN_PREFIX, type LockRow } from './locks.js';
import { isCollection, locate } from './tree.js';
import { child, DAV, is, serialize, XML_DECLARATION } from './xml.js';

/** A LOCK's answer: 201 when it created the resource; `token` for a new lock (not a refresh). */
export interface LockOutcome {
  status: 200 | 201;
  token: string | undefined;
  xml: string;
}

const discovery = (lock: LockRow, now: number) =>
  `${XML_DECLARATION}<D:prop xmlns:D="DAV:"><D:lockdiscovery>${activeLock(lock, now)}</D:lockdiscovery></D:prop>`;

/** LOCK: a new write lock (exclusive or shared), or without a body the refresh of one the If header names. */
export async function davLock(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
  body: DavBody,
): Promise<LockOutcome> {
  const located = await locate(s.db, ownerId, segments);
  const xml = await body.xml();
  const now = new Date();
  const timeout = parseTimeout(headers.timeout);
  const expiresAt = new Date(now.getTime() + timeout * 1000).toISOString();
  const path = lockPathOf(segments);
  const locks = await repo.liveLocks(s.db, ownerId, now.toISOString());
  const lists = ifLists(headers);
  if (xml === undefined) {
    // A refresh: the If header names a lock that applies here.
    const tokens = lists === undefined ? new Set<string>() : submittedTokens(lists);
    const held = covering(locks, path).find((l) => tokens.has(l.token));
    if (held === undefined) throw Errors.davPreconditionFailed();
    await repo.refreshLock(s.db, ownerId, held.token, timeout, expiresAt);
    return {
      status: 200,
      token: undefined,
      xml: discovery({ ...held, timeout_seconds: timeout, expires_at: expiresAt }, now.getTime()),
    };
  }
  if (!is(xml, DAV, 'lockinfo')) throw Errors.invalidDavRequest('The body must be a DAV:lockinfo element');
  const scope = child(xml, DAV, 'lockscope');
  const exclusive = scope !== undefined && child(scope, DAV, 'exclusive') !== undefined;
  if (!exclusive && (scope === undefined || child(scope, DAV, 'shared') === undefined))
    throw Errors.invalidDavRequest('DAV:lockscope must be exclusive or shared');
  const type = child(xml, DAV, 'locktype');
  if (type === undefined || child(type, DAV, 'write') === undefined)
    throw Errors.invalidDavRequest('Only write locks exist');
  const depth = headers.depth ?? 'infinity';
  if (depth !== '0' && depth !== 'infinity') throw Errors.invalidDavRequest("A lock's Depth is 0 or infinity");
  const infinite = depth === 'infinity' && located.entry !== undefined && isCollection(located.entry);
  const conflicting = [...covering(locks, path), ...(infinite ? below(locks, path) : [])];
  if (conflicting.some((l) => exclusive || l.exclusive)) throw Errors.davAlreadyLocked();
  if (lists !== undefined && !(await ifHolds(s.db, lists, ownerId, located, locks)))
    throw Errors.davPreconditionFailed();
  let created = false;
  if (located.entry === undefined) {
    // RFC 4918 §9.10.4: locking an unmapped URL creates an empty resource.
    if (located.parent === undefined) throw Errors.davNoParent();
    await put(
      s,
      ownerId,
      located.parent,
      segments.at(-1)!,
      undefined,
      NO_BODY.stream(),
      async () => Buffer.alloc(0),
      undefined,
    );
    created = true;
  }
  const owner = child(xml, DAV, 'owner');
  const row: LockRow = {
    token: `${TOKEN_PREFIX}${newId()}`,
    path,
    depth_infinity: infinite,
    exclusive,
    lock_owner: owner === undefined ? '' : serialize(owner),
    timeout_seconds: timeout,
    expires_at: expiresAt,
  };
  await repo.insertLock(s.db, { ...row, owner_id: ownerId });
  return { status: created ? 201 : 200, token: row.token, xml: discovery(row, now.getTime()) };
}

/** UNLOCK: the lock whose token the Lock-Token header names, if it applies to this path. */
export async function davUnlock(
  s: DavServices,
  ownerId: string,
  segments: Segments,
  headers: DavHeaders,
): Promise<void> {
  const token = headers.lockToken;
  if (token === undefined) throw Errors.invalidDavRequest('UNLOCK needs a Lock-Token header: <token>');
  const locks = await repo.liveLocks(s.db, ownerId, new Date().toISOString());
  const held = covering(locks, lockPathOf(segments)).find((l) => l.token === token);
  if (held === undefined) throw Errors.lockTokenMismatch();
  await repo.deleteLock(s.db, ownerId, token);
}
