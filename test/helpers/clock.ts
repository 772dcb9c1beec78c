import { after, before, mock } from 'node:test';

export interface TestClock {
  /** Moves Date on by `ms` (1 by default): the next write gets a later timestamp than the last. */
  tick(ms?: number): void;
}

/**
 * Date for this test file stands still at the real time the file started and moves only on tick():
 * tests that need a later timestamp say so, instead of waiting for the wall clock to move on, and
 * no two writes get different timestamps by accident. Only Date is replaced (node:test's mock
 * timers); setTimeout, performance.now() and I/O run as usual. Call it at the top of the file.
 */
export function frozenDate(): TestClock {
  before(() => mock.timers.enable({ apis: ['Date'], now: Date.now() }));
  after(() => mock.timers.reset());
  return { tick: (ms = 1) => mock.timers.tick(ms) };
}
