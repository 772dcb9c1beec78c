import os from 'node:os';
import argon2 from 'argon2';
import type { Argon2Cost } from '../config.js';
import { Errors } from '../errors.js';

/**
 * OWASP's Argon2id floor: 19 MiB, 2 passes, 1 lane. The cheap cost (64 KiB, 1 pass: ~0.2 ms
 * instead of ~40 ms) exists only for the test suite; config.ts refuses it outside NODE_ENV=test.
 */
export const ARGON2_COSTS = {
  owasp: { memoryCost: 19_456, timeCost: 2, parallelism: 1 },
  'test-cheap': { memoryCost: 64, timeCost: 1, parallelism: 1 },
} as const satisfies Record<Argon2Cost, { memoryCost: number; timeCost: number; parallelism: number }>;

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
  /** config.argon2Cost; OWASP's unless given. */
  cost?: Argon2Cost;
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
  const hashOptions = { type: argon2.argon2id, ...ARGON2_COSTS[options.cost ?? 'owasp'] } as const;
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
    hash: (password) => limited(() => argon2.hash(password, hashOptions)),
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
      dummyHash ??= argon2.hash('vellum-dummy-password-for-timing', hashOptions).catch((error: unknown) => {
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
