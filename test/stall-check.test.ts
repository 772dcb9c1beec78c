import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { assertNoStall, healthDuring, TURN_CPU_BUDGET_MS } from './helpers/stall.js';

/**
 * The stall tests' own check (helpers/stall.ts), against work of a known shape: it must fail on a
 * turn over the budget and on a run of shorter turns that holds every probe, and pass one turn
 * under the budget. The probes go to a plain server in this process, as they go to the app there.
 */
const linux = fs.existsSync(`/proc/self/task/${process.pid}/schedstat`);

let server: http.Server;
let base: string;
before(async () => {
  server = http.createServer((_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => new Promise<void>((resolve) => server.close(() => resolve())));

/**
 * Holds the event loop until the process has spent `ms` more of CPU (by CPU, not the clock: a busy
 * machine may deschedule it).
 */
function burn(ms: number): void {
  const spent = () => {
    const { user, system } = process.cpuUsage();
    return user + system;
  };
  const until = spent() + ms * 1000;
  while (spent() < until) {
    // the work
  }
}

/** `turns` turns of the event loop of `ms` each, with the loop free between them. */
async function turnsOf(turns: number, ms: number): Promise<void> {
  for (let i = 0; i < turns; i++) {
    await new Promise((resolve) => setImmediate(resolve));
    burn(ms);
  }
}

const check = async (work: () => Promise<void>) => assertNoStall(await healthDuring(base, work), 'work');

test('one turn over the budget fails the check', { skip: !linux && 'no per-thread CPU account here' }, async () => {
  await assert.rejects(
    check(() => turnsOf(1, TURN_CPU_BUDGET_MS + 100)),
    new RegExp(`a turn of the event loop over ${TURN_CPU_BUDGET_MS} ms CPU`),
  );
});

test('turns within the budget, one after another, fail the check: every probe waits behind one', {
  skip: !linux && 'no per-thread CPU account here',
}, async () => {
  await assert.rejects(
    check(() => turnsOf(8, 150)),
    /\/healthz waited behind over 100 ms of the main thread's CPU \d+ times in \d+/,
  );
});

test('one turn within the budget passes, however few probes went out', {
  skip: !linux && 'no per-thread CPU account here',
}, async () => {
  await check(() => turnsOf(1, 150));
  await check(async () => {
    await turnsOf(1, 150);
    await turnsOf(40, 2);
  });
});
