import type { Db } from '../db/schema.js';
import { findAccountStatus } from './user.repository.js';

/** An account as the access layer needs it on each request. */
export interface AccountStatus {
  disabled: boolean;
  /** Epoch seconds of the last time an administrator enabled it again; null when never. */
  reenabledAt: number | null;
}

export interface AccountStatusOptions {
  /**
   * How long an instance believes what it read. Every change is also told to every instance
   * (forget, through the event bus), so this only bounds how stale an instance can be when that
   * signal is lost: Redis away, SQLite with WORKERS > 1 (whose bus is each process's own).
   */
  ttlMs: number;
  /** More accounts than this kept: the oldest half is dropped (a bound on memory, not a policy). */
  maxEntries: number;
}

export const ACCOUNT_STATUS_DEFAULTS: AccountStatusOptions = { ttlMs: 2_000, maxEntries: 50_000 };

/**
 * Whether an account is disabled, and since when it is enabled again, read once per account per
 * `ttlMs` per instance instead of once per request: on the notes routes an access token is
 * otherwise stateless, and a primary-key read on every request is the one cost of "a disabled
 * account's tokens stop at once" that this keeps away (BENCHMARKS.md). An administrator's change
 * calls `forget` on this instance before it answers and on every other instance through the bus,
 * so the next request here sees it; a read that was under way when `forget` ran is not kept.
 */
export class AccountStatusCache {
  private readonly entries = new Map<string, { status: AccountStatus | undefined; until: number }>();
  private readonly reading = new Map<string, Promise<AccountStatus | undefined>>();

  constructor(
    private readonly db: Db,
    private readonly options: AccountStatusOptions = ACCOUNT_STATUS_DEFAULTS,
  ) {}

  /** The account's status; undefined when there is no such account. */
  get(userId: string): Promise<AccountStatus | undefined> {
    const entry = this.entries.get(userId);
    if (entry !== undefined && entry.until > Date.now()) return Promise.resolve(entry.status);
    const pending = this.reading.get(userId);
    if (pending !== undefined) return pending;
    const read = findAccountStatus(this.db, userId).then(
      (row) => {
        const status =
          row === undefined
            ? undefined
            : {
                disabled: row.disabled,
                reenabledAt: row.reenabled_at === null ? null : Math.floor(Date.parse(row.reenabled_at) / 1000),
              };
        // Kept only when no `forget` ran meanwhile (it removes this read from `reading`).
        if (this.reading.get(userId) === read) {
          this.reading.delete(userId);
          this.remember(userId, status);
        }
        return status;
      },
      (error: unknown) => {
        if (this.reading.get(userId) === read) this.reading.delete(userId);
        throw error;
      },
    );
    this.reading.set(userId, read);
    return read;
  }

  /** The account changed (disabled, enabled, deleted): the next request reads it again. */
  forget(userId: string): void {
    this.entries.delete(userId);
    this.reading.delete(userId);
  }

  private remember(userId: string, status: AccountStatus | undefined): void {
    if (this.entries.size >= this.options.maxEntries) {
      // Maps iterate in insertion order: the first half is the oldest.
      let drop = Math.floor(this.entries.size / 2);
      for (const key of this.entries.keys()) {
        if (drop-- <= 0) break;
        this.entries.delete(key);
      }
    }
    this.entries.set(userId, { status, until: Date.now() + this.options.ttlMs });
  }
}

/**
 * Seconds either side of a re-enabling within which a token's `iat` (whole seconds, from whichever
 * instance's clock) cannot tell "before" from "after": there the token's session decides.
 */
const REENABLE_SKEW_SECONDS = 5;

/**
 * Whether an access token's account still lets it in: not when the account is disabled, nor when
 * the token was issued before the account was enabled again (its session ended with the disabling).
 * An account that no longer exists is left to the route, which answers as it always has.
 */
export async function accessTokenAllowed(
  cache: AccountStatusCache,
  userId: string,
  issuedAt: number,
  sessionIsLive: () => Promise<boolean>,
): Promise<boolean> {
  const status = await cache.get(userId);
  if (status === undefined) return true;
  if (status.disabled) return false;
  if (status.reenabledAt === null || issuedAt > status.reenabledAt + REENABLE_SKEW_SECONDS) return true;
  if (issuedAt < status.reenabledAt - REENABLE_SKEW_SECONDS) return false;
  return sessionIsLive();
}
