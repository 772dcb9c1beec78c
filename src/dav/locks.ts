import { Errors } from '../errors.js';
import { hrefOf, type Segments } from './dav-path.js';
import type { LockRow } from './dav.repository.js';
import { escapeXml } from './xml.js';

export type { LockRow } from './dav.repository.js';

export const TOKEN_PREFIX = 'urn:uuid:';
/** What a lock lasts when the client asks for longer, or for ever: it renews well before this. */
export const MAX_TIMEOUT_SECONDS = 3600;
export const DEFAULT_TIMEOUT_SECONDS = 600;

export const locked = Errors.davLocked;

const isBelow = (ancestor: string, path: string): boolean =>
  ancestor === '' ? path !== '' : path.startsWith(`${ancestor}/`);

/** Locks that apply to `path`: on it, or on a collection above it with depth infinity. */
export const covering = (locks: LockRow[], path: string): LockRow[] =>
  locks.filter((lock) => lock.path === path || (lock.depth_infinity && isBelow(lock.path, path)));

/** Locks on anything below `path` (for changes to a whole collection). */
export const below = (locks: LockRow[], path: string): LockRow[] => locks.filter((lock) => isBelow(path, lock.path));

/**
 * 423 unless the client holds what it must: the token of every exclusive lock in `relevant`, and
 * one token among the shared ones.
 */
export function requireTokens(relevant: LockRow[], submitted: ReadonlySet<string>): void {
  const shared = relevant.filter((lock) => !lock.exclusive);
  const holdsShared = shared.length === 0 || shared.some((lock) => submitted.has(lock.token));
  if (!holdsShared || relevant.some((lock) => lock.exclusive && !submitted.has(lock.token))) throw locked();
}

/** `Timeout: Second-600, Infinite` → seconds, capped at MAX_TIMEOUT_SECONDS. */
export function parseTimeout(header: string | undefined): number {
  for (const part of (header ?? '').split(',')) {
    const value = part.trim();
    if (/^infinite$/i.test(value)) return MAX_TIMEOUT_SECONDS;
    const match = /^second-(\d{1,10})$/i.exec(value);
    if (match !== null) return Math.max(1, Math.min(Number(match[1]), MAX_TIMEOUT_SECONDS));
  }
  return DEFAULT_TIMEOUT_SECONDS;
}

/** A lock as DAV:activelock (lockdiscovery). */
export function activeLock(lock: LockRow, now: number): string {
  const remaining = Math.max(0, Math.ceil((Date.parse(lock.expires_at) - now) / 1000));
  const root = lock.path === '' ? [] : lock.path.split('/');
  return (
    '<D:activelock><D:locktype><D:write/></D:locktype>' +
    `<D:lockscope>${lock.exclusive ? '<D:exclusive/>' : '<D:shared/>'}</D:lockscope>` +
    `<D:depth>${lock.depth_infinity ? 'infinity' : '0'}</D:depth>` +
    lock.lock_owner +
    `<D:timeout>Second-${remaining}</D:timeout>` +
    `<D:locktoken><D:href>${escapeXml(lock.token)}</D:href></D:locktoken>` +
    `<D:lockroot><D:href>${escapeXml(hrefOf(root as Segments, false))}</D:href></D:lockroot>` +
    '</D:activelock>'
  );
}

export const SUPPORTED_LOCK =
  '<D:lockentry><D:lockscope><D:exclusive/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>' +
  '<D:lockentry><D:lockscope><D:shared/></D:lockscope><D:locktype><D:write/></D:locktype></D:lockentry>';
