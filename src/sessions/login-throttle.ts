import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest, onSendAsyncHookHandler } from 'fastify';
import { Errors } from '../errors.js';
import type { PolicyLayer } from '../http/route-policy.js';
import type { ThrottleStore } from '../http/throttle-store.js';
import { normalizeUsername } from '../accounts/username.js';

/** Failures are counted in a window that starts with the first one. */
const FAILURE_WINDOW_MS = 15 * 60_000;
/** The first lockout; each further failure after a lockout doubles it, up to the cap. */
const FIRST_LOCKOUT_MS = 60_000;
const MAX_LOCKOUT_MS = 60 * 60_000;

/**
 * The `lockout` layer (http/route-policy.ts): per-account brute-force protection for the routes
 * whose policy says loginLockout (login), keyed on the normalized username, whether or not such a
 * user exists (so a lockout reveals nothing about which names are taken).
 *
 * Every attempt is counted as a failure before the password is checked and the count is cleared
 * when the login succeeds. Counting first means a burst of parallel guesses cannot slip past the
 * limit while the first hashes are still being verified. The attempt that reaches `maxFailures`
 * takes a lock for FIRST_LOCKOUT_MS and is still checked (so a user who finally types the right
 * password gets in); while the lock holds, attempts are refused with 429 without a password check.
 * Once it lapses, the next attempt counts again and, if it fails too, locks twice as long.
 *
 * Known trade-off: anyone can lock an account by failing on purpose. The lockout is short at first
 * and the per-address limit caps how often one client can renew it.
 */
export function loginLockout(store: ThrottleStore, maxFailures: number): PolicyLayer {
  /** The account key of each attempt that got through, so that a success can clear its count. */
  const attempts = new WeakMap<FastifyRequest, string>();

  async function checkAccount(request: FastifyRequest): Promise<void> {
    const username = (request.body as { username?: unknown } | undefined)?.username;
    if (typeof username !== 'string') return; // the schema already refused it
    const key = accountKey(username);
    let refusal: number | undefined;
    try {
      refusal = await countAttempt(store, key, maxFailures);
    } catch (error) {
      // Fail open, as the per-address limits do: a Redis outage must not stop every login.
      request.log.error({ err: error }, 'login throttle store failed; attempt let through');
      return;
    }
    if (refusal !== undefined) throw Errors.tooManyRequests(Math.ceil(refusal / 1000));
    attempts.set(request, key);
  }

  async function clearOnSuccess(request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const key = attempts.get(request);
    if (key === undefined || reply.statusCode !== 200) return;
    try {
      await clearCount(store, key);
    } catch (error) {
      request.log.error({ err: error }, 'login throttle store failed; failure count not cleared');
    }
  }

  const clear: onSendAsyncHookHandler = async (request, reply, payload) => {
    await clearOnSuccess(request, reply);
    return payload;
  };
  // preHandler: after the body is parsed and validated, right before the password is checked.
  // onSend runs before the response leaves, so the next login already sees the cleared count.
  return ({ loginLockout }) => (loginLockout === true ? { preHandler: [checkAccount], onSend: [clear] } : undefined);
}

/**
 * Counts one attempt under key (an account or a session) before its secret is checked: the
 * milliseconds left when it is locked (refused without a check), else undefined. The attempt that
 * reaches `maxFailures` takes the lock and is still checked.
 */
async function countAttempt(store: ThrottleStore, key: string, maxFailures: number): Promise<number | undefined> {
  const lockKey = `lock:${key}`;
  const locked = await store.remaining(lockKey);
  if (locked > 0) return locked;
  const failures = await store.increment(`fail:${key}`, FAILURE_WINDOW_MS);
  if (failures < maxFailures) return undefined;
  const lockMs = Math.min(FIRST_LOCKOUT_MS * 2 ** (failures - maxFailures), MAX_LOCKOUT_MS);
  if (await store.claim(lockKey, lockMs)) {
    // Keep the count through the lockout, so the next failure after it locks longer.
    await store.expire(`fail:${key}`, lockMs + FAILURE_WINDOW_MS);
    return undefined;
  }
  // A parallel attempt took the lock first.
  return Math.max(await store.remaining(lockKey), 1000);
}

const clearCount = (store: ThrottleStore, key: string) => store.delete(`fail:${key}`, `lock:${key}`);

/**
 * Failure counts of one session (refresh-token family), for a password or one-time code checked
 * for a caller already signed in (sessions/session-lockout.ts): the same thresholds and doubling
 * lockout as the login's, on keys of their own, so they neither read nor feed an account's login
 * lockout. Failed logins by strangers cannot stop the signed-in owner, and a thief's guesses
 * through a stolen access token lock only the stolen session.
 */
export interface SessionFailures {
  /** Counted before the check, exactly as a login attempt is; the milliseconds to wait when the session is locked. */
  countAttempt(sessionId: string): Promise<number | undefined>;
  /** The right secret after countAttempt: the count starts again. */
  clear(sessionId: string): Promise<void>;
}

export function sessionFailures(store: ThrottleStore, maxFailures: number): SessionFailures {
  // An account key is a base64url hash, never 'session:'-prefixed: the two kinds of count cannot meet.
  const sessionKey = (sessionId: string) => `session:${sessionId}`;
  return {
    countAttempt: (sessionId) => countAttempt(store, sessionKey(sessionId), maxFailures),
    clear: (sessionId) => clearCount(store, sessionKey(sessionId)),
  };
}

/** Hashed: bounded key size whatever the client sends, and no raw usernames in Redis. */
function accountKey(username: string): string {
  return createHash('sha256').update(normalizeUsername(username)).digest('base64url');
}
