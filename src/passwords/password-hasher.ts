import os from 'node:os';
import argon2 from 'argon2';
import { Errors } from '../errors.js';

/** OWASP's Argon2id floor: 19 MiB, 2 passes, 1 lane. */
const ARGON2_OPTIONS = { type: argon2.argon2id, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export interface PasswordHasher {
  hash(password: string): Promise<string>;
  verify(hash: string, password: string): Promise<boolean>;
  /** Spends the same work as verify() for a user that does not exist. */
  verifyDummy(password: string): Promise<void>;
  /** Hashes running or waiting right now. */
  readonly depth: number;
  /** True while the queue is full, so that a new hash would be refused with 503 anyway. */
  readonly full?: boolean;
}

export interface HasherOptions {
  /** Hashes run at once; each takes one libuv thread for ~20–40 ms. */
  concurrency?: number;
  /** Hashes allowed to wait; past this the request is shed with 503. */
  maxQueue?: number;
}

/**
 * Argon2id runs on libuv's thread pool, off the event loop. A bounded queue in front keeps a login
 * storm from tying up every thread and from piling up memory: excess work is refused early.
 */
export function createPasswordHasher(options: HasherOptions = {}): PasswordHasher {
  // One core is left to the event loop: with a hash on every core, a login storm starved every other
  // request (GET note p99 x28 on 2 cores, BENCHMARKS.md). Past the queue, logins are shed with 503.
  const concurrency = options.concurrency ?? Math.max(1, os.availableParallelism() - 1);
  const maxQueue = options.maxQueue ?? concurrency * 16;
  let running = 0;
  const waiting: Array<() => void> = [];
  let dummyHash: Promise<string> | undefined;

  async function limited<T>(work: () => Promise<T>): Promise<T> {
    if (running >= concurrency) {
      if (waiting.length >= maxQueue) throw Errors.busy(1);
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    running++;
    try {
      return await work();
    } finally {
      running--;
      waiting.shift()?.();
    }
  }

  return {
    hash: (password) => limited(() => argon2.hash(password, ARGON2_OPTIONS)),
    async verify(hash, password) {
      return limited(async () => {
        try {
          return await argon2.verify(hash, password);
        } catch {
          return false; // a malformed stored hash never verifies
        }
      });
    },
    async verifyDummy(password) {
      // A failed hash is forgotten, not cached: one failure must not break every unknown-user login.
      dummyHash ??= argon2.hash('vellum-dummy-password-for-timing', ARGON2_OPTIONS).catch((error: unknown) => {
        dummyHash = undefined;
        throw error;
      });
      const hash = await dummyHash;
      await limited(() => argon2.verify(hash, password));
    },
    get depth() {
      return running + waiting.length;
    },
    get full() {
      return running >= concurrency && waiting.length >= maxQueue;
    },
  };
}
