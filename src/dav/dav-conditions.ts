import type { Db } from '../db/schema.js';
import { Errors, type AppError } from '../errors.js';
import { lockPathOf, pathOfUrl, segmentsOf, type Segments } from './dav-path.js';
import type { DavHeaders } from './dav-request.js';
import * as repo from './dav.repository.js';
import { etagOf } from './dav.service.js';
import { parseIf, sameEtag, submittedTokens, type IfList } from './if-header.js';
import { below, covering, requireTokens, type LockRow } from './locks.js';
import { locate, type Entry, type Located } from './tree.js';

/** The request's If header, parsed (undefined when absent). */
export function ifLists(headers: DavHeaders): IfList[] | undefined {
  return headers.if === undefined ? undefined : parseIf(headers.if);
}

/** Whether the If header holds: some list whose every condition does, against its resource. */
export async function ifHolds(
  db: Db,
  lists: IfList[],
  ownerId: string,
  located: Located,
  locks: LockRow[],
): Promise<boolean> {
  for (const list of lists) {
    let segments: Segments = located.segments;
    let entry = located.entry;
    if (list.resource !== undefined) {
      try {
        segments = segmentsOf(pathOfUrl(list.resource));
      } catch {
        continue;
      }
      if (lockPathOf(segments) !== lockPathOf(located.segments)) entry = (await locate(db, ownerId, segments)).entry;
    }
    const path = lockPathOf(segments);
    const etag = entry === undefined ? undefined : etagOf(entry);
    const holds = list.conditions.every((c) => {
      const match =
        c.token !== undefined
          ? covering(locks, path).some((lock) => lock.token === c.token)
          : etag !== undefined && sameEtag(c.etag!, etag);
      return c.not ? !match : match;
    });
    if (holds) return true;
  }
  return false;
}

/**
 * The checks every write makes: the If header (412 when it does not hold, RFC 4918 §10.4), then
 * the locks (423 unless the header names the tokens of the locks on each changed path, and below
 * it when `tree`).
 */
export async function checkWrite(
  db: Db,
  headers: DavHeaders,
  ownerId: string,
  located: Located,
  changed: Array<{ segments: Segments; tree: boolean }>,
): Promise<LockRow[]> {
  const locks = await repo.liveLocks(db, ownerId, new Date().toISOString());
  const lists = ifLists(headers);
  const submitted = lists === undefined ? new Set<string>() : submittedTokens(lists);
  if (lists !== undefined && !(await ifHolds(db, lists, ownerId, located, locks))) throw Errors.davPreconditionFailed();
  for (const { segments, tree } of changed) {
    const path = lockPathOf(segments);
    requireTokens([...covering(locks, path), ...(tree ? below(locks, path) : [])], submitted);
  }
  return locks;
}

/**
 * If-Match and If-None-Match against the entry's ETag (RFC 9110 §13): made-up tags simply do not
 * match. `refused` is the 412 (a read's names the resource's Last-Modified).
 */
export function checkMatch(
  headers: DavHeaders,
  entry: Entry | undefined,
  read: boolean,
  refused: () => AppError = Errors.davPreconditionFailed,
): 'not-modified' | undefined {
  const etag = entry === undefined ? undefined : etagOf(entry);
  const tags = (value: string) =>
    value
      .split(',')
      .map((t) => t.trim())
      .filter((t) => t !== '');
  if (headers.ifMatch !== undefined) {
    const list = tags(headers.ifMatch);
    const holds =
      entry !== undefined &&
      (list.includes('*') || (etag !== undefined && list.some((t) => !t.startsWith('W/') && t === etag)));
    if (!holds) throw refused();
  }
  if (headers.ifNoneMatch !== undefined && entry !== undefined) {
    const list = tags(headers.ifNoneMatch);
    if (list.includes('*') || (etag !== undefined && list.some((t) => sameEtag(t, etag)))) {
      if (read) return 'not-modified';
      throw refused();
    }
  }
  return undefined;
}

/** Locks on `path` itself and below it: they go with what a DELETE or MOVE takes away. */
export async function dropLocksAt(db: Db, ownerId: string, locks: LockRow[], path: string): Promise<void> {
  await repo.deleteLocksAt(
    db,
    ownerId,
    [...covering(locks, path).filter((l) => l.path === path), ...below(locks, path)].map((l) => l.token),
  );
}
