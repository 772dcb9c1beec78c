import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * The service's figure (docs, BENCHMARKS.md): while a hostile request runs, another client's
 * `GET /healthz` answers within this many milliseconds at p99. It is a wall-clock figure, so the
 * tests do not assert it (on shared cores a process descheduled for 100 ms fails it with no stall
 * in the code): `npm run bench:stall` runs the stall scenarios and reports it (bench/stall.ts).
 */
export const STALL_P99_MS = 100;

/**
 * What the stall tests assert instead: no turn of the event loop costs the main thread more than
 * this much CPU time while the hostile work is in flight. CPU time, read from the kernel's account
 * of the main thread (/proc/self/task/<pid>/schedstat), does not grow while the process waits for a
 * core, so the bound holds on a busy machine as on a quiet one; a synchronous parse, diff or
 * search of the sizes these tests send costs seconds of it. (Every turn of these scenarios cost
 * under 60 ms of CPU on a machine at load 17, where /healthz p99 reached 1.4 s; the bound leaves
 * room for a slower core and a collection: at 150 ms the 1,000-file zip with a 32 MiB document
 * failed once in a CI run at 183 ms, a turn no code of ours accounts for — the stalls these tests
 * exist for cost 2 to 12 s.)
 */
export const TURN_CPU_BUDGET_MS = 250;

/**
 * And: the main thread's CPU time spent while a probe waited for its answer — the work the probe
 * queued behind — is under this at p99. It is the wall-clock p99 of STALL_P99_MS counted in CPU
 * time: many short turns in a row (fifty diffs on the event loop, ~120 ms each) hold /healthz as
 * one long turn does. Probes go one at a time, so one long turn (bounded by TURN_CPU_BUDGET_MS)
 * holds one probe: one probe over this is allowed however few there were (with under a hundred,
 * a plain p99 is the slowest probe, and a single 102 ms turn of WebDAV's XML parser, well within
 * the turn budget, failed a run).
 */
export const PROBE_CPU_P99_MS = 100;

/** How many probes may wait behind more than PROBE_CPU_P99_MS: 1 %, and at least one. */
function probesAllowedOver(probes: number): number {
  return Math.max(1, Math.floor(probes / 100));
}

/**
 * The settings the stall tests run the service with: what they assert is CPU time, so the hostile
 * requests may take long on a busy machine (ten heavy searches at once took over a minute at load
 * 17) — without the request's time-out, which also bounds how long a silent socket is kept
 * (app.ts), ending them unanswered.
 */
export const STALL_ENV = { REQUEST_TIMEOUT_SECONDS: '600' } as const;

export interface HealthDuring<T> {
  /** What the hostile work resolved to. */
  result: T;
  /** Round-trip times of the /healthz probes sent while it ran, in milliseconds, in order (reported, not asserted). */
  samples: number[];
  /** The 99th percentile of `samples` (with few samples, their maximum): reported by bench/stall.ts. */
  p99: number;
  /** Probes answered 200 before the hostile work settled. */
  answeredInFlight: number;
  /** The most main-thread CPU time one turn of the event loop took while the work ran, in ms. */
  longestTurnCpuMs: number;
  /** For each probe, the main thread's CPU time between its sending and its answer, in ms. */
  probeCpuMs: number[];
}

/**
 * The main thread's CPU time so far, in nanoseconds (Linux; 0 elsewhere). Read with one pread on a
 * descriptor kept open: opening and reading the file each time cost the watch below 15 % of a core.
 */
const schedstat = `/proc/self/task/${process.pid}/schedstat`;
const hasSchedstat = fs.existsSync(schedstat);
const schedstatFd = hasSchedstat ? fs.openSync(schedstat, 'r') : -1;
const schedstatBuffer = Buffer.alloc(128);
function mainThreadCpuNs(): number {
  if (!hasSchedstat) return 0;
  const read = fs.readSync(schedstatFd, schedstatBuffer, 0, schedstatBuffer.length, 0);
  return Number(schedstatBuffer.toString('latin1', 0, read).split(' ', 1)[0]);
}

/**
 * How often the watch below reads the main thread's CPU time. A firing comes between turns, so
 * what is counted between two firings is at most the longest turn plus the turns of this much wall
 * time: an over-count of a few milliseconds against TURN_CPU_BUDGET_MS. At 1 ms (and reading the
 * file afresh each time), the watch itself cost the test process 15 % of a core while the work ran.
 */
const TURN_WATCH_MS = 5;

/**
 * Watches the event loop's turns: a timer fires between turns, so the main thread's CPU time
 * between two firings is what the turn(s) in between cost it. Stops with the longest.
 */
function watchTurns(): () => number {
  if (!hasSchedstat) return () => 0;
  let last = mainThreadCpuNs();
  let longest = 0;
  const timer = setInterval(() => {
    const now = mainThreadCpuNs();
    longest = Math.max(longest, now - last);
    last = now;
  }, TURN_WATCH_MS);
  return () => {
    clearInterval(timer);
    longest = Math.max(longest, mainThreadCpuNs() - last);
    return longest / 1e6;
  };
}

/** The app listening on an ephemeral loopback port (stall tests need a real socket, not inject). */
export async function listening(app: FastifyInstance): Promise<string> {
  if (app.server.listening) return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  await app.listen({ host: '127.0.0.1', port: 0 });
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
}

/**
 * Probes go out every PROBE_INTERVAL_MS on one keep-alive connection: a fast load balancer's pace,
 * not a flood. Back to back, the probes took a core of their own from the work being measured; at
 * 5 ms, a fifth of one (client and server share this process), for as long as the work ran — on a
 * loaded machine, minutes. Work that holds the loop for longer than this is caught all the same.
 */
const PROBE_INTERVAL_MS = 20;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });

/** One GET /healthz; resolves when it has answered 200. */
function probe(base: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const request = http.get(`${base}/healthz`, { agent }, (response) => {
      response.resume();
      response.on('end', () => {
        if (response.statusCode !== 200) reject(new Error(`/healthz answered ${response.statusCode}`));
        else resolve();
      });
    });
    request.on('error', reject);
  });
}

export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/**
 * Starts `hostile` and, from another client, probes `/healthz` every PROBE_INTERVAL_MS until it
 * settles (the first probe always goes out while it runs), watching the event loop's turns
 * meanwhile. Each sample runs from when its probe was due, not from when it went out: the client
 * shares the server's event loop here, so a stalled loop also delays the probe's own timer. A
 * hostile failure is rethrown after probing stops.
 */
export async function healthDuring<T>(base: string, hostile: () => Promise<T>): Promise<HealthDuring<T>> {
  await probe(base); // warm: the first request of a connection pays for things a stall test does not measure
  let settled = false;
  const turns = watchTurns();
  const work = hostile().finally(() => {
    settled = true;
  });
  work.catch(() => {}); // rethrown below, once probing stops: not an unhandled rejection meanwhile
  const samples: number[] = [];
  const probeCpuMs: number[] = [];
  let answeredInFlight = 0;
  let due = performance.now();
  do {
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const cpu = mainThreadCpuNs();
    await probe(base);
    probeCpuMs.push((mainThreadCpuNs() - cpu) / 1e6);
    if (!settled) answeredInFlight += 1;
    const now = performance.now();
    samples.push(now - due);
    due = Math.max(due + PROBE_INTERVAL_MS, now);
  } while (!settled);
  const longestTurnCpuMs = turns();
  const result = await work;
  return { result, samples, p99: percentile(samples, 99), answeredInFlight, longestTurnCpuMs, probeCpuMs };
}

/** The probes in a message: how many, the wall-clock p99 and the slowest ten (for the reader, not asserted). */
export function described({
  samples,
  p99,
  answeredInFlight,
  longestTurnCpuMs,
  probeCpuMs,
}: HealthDuring<unknown>): string {
  const slowest = [...samples]
    .sort((a, b) => b - a)
    .slice(0, 10)
    .map((ms) => ms.toFixed(1));
  return `probes waited p99 ${percentile(probeCpuMs, 99).toFixed(1)} ms CPU, longest turn ${longestTurnCpuMs.toFixed(1)} ms CPU; ${answeredInFlight} of ${samples.length} probes answered in flight; /healthz p99 ${p99.toFixed(1)} ms, slowest ${slowest.join(' ')}`;
}

/**
 * The stall tests' assertion, load-independent: /healthz was answered while the hostile work was
 * in flight, no turn of the event loop took more than TURN_CPU_BUDGET_MS of the main thread's CPU,
 * and the probes waited behind less than PROBE_CPU_P99_MS of it at p99 (one probe over it allowed).
 * With VELLUM_STALL_FIGURES set (bench/stall.ts), the wall-clock figures are appended there as a
 * JSON line under `label`.
 */
export function assertNoStall(probed: HealthDuring<unknown>, label: string): void {
  const file = process.env.VELLUM_STALL_FIGURES;
  if (file) {
    const { samples, p99, answeredInFlight, longestTurnCpuMs, probeCpuMs } = probed;
    const figures = {
      kind: 'stall',
      label,
      probes: samples.length,
      p50: percentile(samples, 50),
      p99,
      max: Math.max(...samples),
      answeredInFlight,
      longestTurnCpuMs,
      probeCpuP99Ms: percentile(probeCpuMs, 99),
    };
    fs.appendFileSync(file, `${JSON.stringify(figures)}\n`);
  }
  if (!hasSchedstat) return; // no per-thread CPU account to read (not Linux)
  const what = `${label}: ${described(probed)}`;
  assert.ok(probed.answeredInFlight > 0 || probed.samples.length === 1, `no /healthz answered in flight; ${what}`);
  assert.ok(
    probed.longestTurnCpuMs < TURN_CPU_BUDGET_MS,
    `a turn of the event loop over ${TURN_CPU_BUDGET_MS} ms CPU; ${what}`,
  );
  const over = probed.probeCpuMs.filter((ms) => ms >= PROBE_CPU_P99_MS).length;
  assert.ok(
    over <= probesAllowedOver(probed.probeCpuMs.length),
    `/healthz waited behind over ${PROBE_CPU_P99_MS} ms of the main thread's CPU ${over} times in ${probed.probeCpuMs.length} (1 % and one are allowed); ${what}`,
  );
}
