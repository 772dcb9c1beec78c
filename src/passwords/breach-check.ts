import { createHash } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { dictionary } from '@zxcvbn-ts/language-common';

export type BreachVerdict = 'breached' | 'clean';

export interface BreachChecker {
  /** Whether the password is known from breaches; never throws. */
  check(password: string): Promise<BreachVerdict>;
}

export interface BreachCheckOptions {
  /** Base URL of the range API, or null to use only the offline list. */
  baseUrl: string | null;
  timeoutMs?: number;
  log: Pick<FastifyBaseLogger, 'warn'>;
}

// The zxcvbn-ts list of common passwords, itself drawn from breach corpora; used when the range
// API is off or cannot be reached, so the check fails open to this list and never to nothing.
const offlineList: ReadonlySet<string> = new Set(
  (dictionary['passwords-common'] as string[]).map((p) => p.toLowerCase()),
);

export function isInOfflineList(password: string): boolean {
  return offlineList.has(password.toLowerCase());
}

/** Have I Been Pwned's k-anonymity range API: only the first 5 hex digits of the SHA-1 leave us. */
export function createBreachChecker({ baseUrl, timeoutMs = 2_000, log }: BreachCheckOptions): BreachChecker {
  return {
    async check(password) {
      if (baseUrl === null) return isInOfflineList(password) ? 'breached' : 'clean';
      const sha1 = createHash('sha1').update(password, 'utf8').digest('hex').toUpperCase();
      const prefix = sha1.slice(0, 5);
      try {
        const response = await fetch(`${baseUrl}/range/${prefix}`, {
          headers: { 'Add-Padding': 'true', 'User-Agent': 'vellum-notes' },
          signal: AbortSignal.timeout(timeoutMs),
        });
        if (!response.ok) {
          // Drain the body so the connection goes back to the pool instead of lingering until GC.
          await response.body?.cancel().catch(() => undefined);
          throw new Error(`range API answered ${response.status}`);
        }
        return rangeContains(await response.text(), sha1.slice(5)) ? 'breached' : 'clean';
      } catch (error) {
        // The reason, not the error: an expected outage (a server without internet) is no stack trace.
        const reason =
          error instanceof Error
            ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}`
            : String(error);
        log.warn({ reason }, 'breached-password API unreachable; using the offline list');
        return isInOfflineList(password) ? 'breached' : 'clean';
      }
    },
  };
}

/** Lines are SUFFIX:COUNT; padding lines have count 0, and a line without a count counts as 1. */
export function rangeContains(body: string, suffix: string): boolean {
  for (const line of body.split(/\r?\n/)) {
    const [hash, count] = line.trim().split(':');
    if (hash?.toUpperCase() !== suffix) continue;
    if (count === undefined || Number.parseInt(count, 10) > 0) return true;
  }
  return false;
}
