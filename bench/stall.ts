/**
 * The stall and memory figures the tests no longer assert: `npm run bench:stall [-- files…] [--no-write]`.
 *
 * The stall tests (test/**\/*stall.test.ts) and the upload memory test assert what holds on a busy
 * machine too (/healthz answered while the hostile request is in flight, no turn of the event loop
 * over a CPU bound, the upload stored while it arrives, the download sent before it is read whole).
 * The service's absolute figures are wall-clock and resident memory, which only mean something on a
 * quiet machine: this runs the same scenarios through scripts/test.mjs with VELLUM_STALL_FIGURES
 * set, reads what they recorded and reports each against its budget:
 *   - /healthz p99 while a hostile request runs: under STALL_P99_MS (100 ms);
 *   - a 25 MiB upload: RSS within 60 MiB of idle; its download within 100 MiB (the collector's lag);
 *   - the 64 MiB import of `{}`: the test process's peak RSS grows less than 512 MiB (it was 2.2 GB).
 * Exits 1 when a figure is over its budget. Run it alone on the machine (PostgreSQL too when
 * TEST_DATABASE_URL is set, as for the tests). Writes bench/results/stall-<date>.json unless --no-write.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { STALL_P99_MS } from '../test/helpers/stall.js';

const ROOT = path.resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const write = !args.includes('--no-write');
const named = args.filter((a) => a.endsWith('.ts'));

function testFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('stall.test.ts') ? [path.relative(ROOT, full)] : [];
  });
}
const files =
  named.length > 0 ? named : [...testFiles(path.join(ROOT, 'test')), 'test/attachments/upload-memory.test.ts'];

/** RSS budgets by scenario label (the part after the database's name). */
const RSS_BUDGET_MIB: Array<[RegExp, number]> = [
  [/upload of 25 MiB/, 60],
  [/download of 25 MiB/, 100],
  [/import of 64 MiB/, 512],
];

const figures = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-stall-')), 'figures.jsonl');
fs.writeFileSync(figures, '');
// One file at a time, as the figures need the cores (the tests themselves do not).
let testsFailed = false;
for (const file of files) {
  const run = spawnSync(process.execPath, ['scripts/test.mjs', file], {
    cwd: ROOT,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, VELLUM_STALL_FIGURES: figures },
  });
  if (run.status !== 0) testsFailed = true;
}

type Figure =
  | {
      kind: 'stall';
      label: string;
      probes: number;
      p50: number;
      p99: number;
      max: number;
      longestTurnCpuMs: number;
      probeCpuP99Ms: number;
    }
  | { kind: 'rss'; label: string; grownMiB: number };
const rows = fs
  .readFileSync(figures, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line) as Figure);

let over = 0;
const r1 = (x: number) => Math.round(x * 10) / 10;
console.log(`\n/healthz while a hostile request runs (budget: p99 under ${STALL_P99_MS} ms)`);
console.log('p50 ms  p99 ms  max ms  turn CPU ms  probe CPU p99 ms  probes  scenario');
for (const f of rows) {
  if (f.kind !== 'stall') continue;
  const bad = f.p99 >= STALL_P99_MS;
  if (bad) over += 1;
  console.log(
    `${String(r1(f.p50)).padStart(6)}  ${String(r1(f.p99)).padStart(6)}  ${String(r1(f.max)).padStart(6)}  ${String(r1(f.longestTurnCpuMs)).padStart(11)}  ${String(r1(f.probeCpuP99Ms)).padStart(16)}  ${String(f.probes).padStart(6)}  ${f.label}${bad ? '  OVER' : ''}`,
  );
}
console.log('\nResident memory');
for (const f of rows) {
  if (f.kind !== 'rss') continue;
  const budget = RSS_BUDGET_MIB.find(([pattern]) => pattern.test(f.label))?.[1];
  const bad = budget !== undefined && f.grownMiB >= budget;
  if (bad) over += 1;
  console.log(`+${r1(f.grownMiB)} MiB (budget ${budget ?? '-'} MiB)  ${f.label}${bad ? '  OVER' : ''}`);
}
if (write) {
  const out = path.join(ROOT, 'bench', 'results', `stall-${new Date().toISOString().slice(0, 10)}.json`);
  fs.writeFileSync(
    out,
    `${JSON.stringify({ machine: { cpus: os.cpus().length, load: os.loadavg() }, rows }, null, 2)}\n`,
  );
  console.log(`\nWritten: ${path.relative(ROOT, out)}`);
}
if (testsFailed) console.error('Some of the scenarios failed as tests (above).');
if (over > 0) console.error(`${over} figure(s) over budget (a busy machine shows its load here: run alone).`);
process.exit(testsFailed || over > 0 ? 1 : 0);
