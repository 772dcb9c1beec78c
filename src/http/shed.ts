import type { onRequestHookHandler } from 'fastify';
import { Errors } from '../errors.js';
import type { PolicyLayer } from './route-policy.js';

/**
 * How long a refused request waits for its 503. A client that retries at once (ignoring
 * Retry-After: 1) would otherwise send thousands of requests a second, and answering them took
 * the event loop from every other request; this bounds each connection to four a second.
 */
export const SHED_DELAY_MS = 250;

/** The password hasher as shedding sees it (passwords/password-hasher.ts, given by app.ts). */
export interface HashQueue {
  /** True while the queue is full, so that a new hash would be refused with 503 anyway. */
  readonly full?: boolean;
}

/**
 * The `shedding` layer (route-policy.ts): while the password hasher's queue is full, a request to a
 * route whose policy says hashesPassword is refused with 503 and Retry-After as it arrives, before
 * its body is read, parsed and validated and before the database is asked: under a login flood
 * that work went into requests refused anyway, and reads waited behind it (BENCHMARKS.md).
 */
export function hashShedding(hasher: HashQueue): PolicyLayer {
  const shed: onRequestHookHandler = (_request, _reply, done) => {
    if (hasher.full === true) setTimeout(() => done(Errors.busy(1)), SHED_DELAY_MS);
    else done();
  };
  return ({ hashesPassword }) => (hashesPassword === true ? { onRequest: [shed] } : undefined);
}
