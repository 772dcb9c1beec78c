// Runs every test file under test/ and web/test/ with Node's test runner, on SQLite and, when
// TEST_DATABASE_URL is set, on PostgreSQL too (the Redis tests run when TEST_REDIS_URL is set, and
// fail when it is set but Redis does not answer); then the browser tests (web/e2e, Playwright driving
// the system's Chromium against a real build). Stall tests run last, alone (see isStall). Extra
// arguments are passed to `node --test` (e.g. a file to run alone); then the browser tests run only
// if a web/e2e file is named.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

function testFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(full);
    return entry.name.endsWith('.test.ts') ? [full] : [];
  });
}

const line = '!'.repeat(78);
const args = process.argv.slice(2);
const browserArgs = args.filter((a) => a.startsWith('web/e2e/'));
const nodeArgs = args.filter((a) => !a.startsWith('web/e2e/'));
const namedFiles = args.some((a) => a.endsWith('.ts'));
const files = namedFiles ? [] : [...testFiles('test'), ...testFiles('web/test')].sort();

const EXAMPLE = 'TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test TEST_REDIS_URL=redis://127.0.0.1:6379 npm test';
if (!process.env.TEST_DATABASE_URL) {
  console.warn(`${line}\n!! TEST_DATABASE_URL is not set: PostgreSQL tests are SKIPPED; only SQLite runs.\n!! Example: ${EXAMPLE}\n${line}`);
}
if (!process.env.TEST_REDIS_URL) {
  console.warn(`${line}\n!! TEST_REDIS_URL is not set: Redis tests (shared counters, breaker recovery) are SKIPPED.\n!! Example: ${EXAMPLE}\n${line}`);
}

// Stall tests (*stall.test.ts) time /healthz while a hostile request runs: they measure the
// server's event loop and need the cores to themselves, so they run after the rest, one file at a
// time. Beside another test file, its CPU-bound set-up took the server's core and failed them.
const isStall = (file) => file.endsWith('stall.test.ts');
const runNode = (concurrency, list) => spawnSync(
  process.execPath,
  ['--import', 'tsx', '--test', `--test-concurrency=${concurrency}`, '--test-reporter=spec', ...nodeArgs, ...list],
  { stdio: 'inherit' },
).status ?? 1;

let status = 0;
if (!namedFiles || nodeArgs.some((a) => a.endsWith('.ts'))) {
  status = namedFiles ? runNode(2, []) : runNode(2, files.filter((f) => !isStall(f)));
  if (!namedFiles) {
    const stallStatus = runNode(1, files.filter(isStall));
    if (status === 0) status = stallStatus;
  }
}

const chromium = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
let browserSkipped = false;
if (!namedFiles || browserArgs.length > 0) {
  if (!fs.existsSync(chromium)) {
    browserSkipped = true;
  } else {
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const build = spawnSync(npm, ['run', '-s', 'build'], { stdio: 'inherit' });
    const browser = build.status !== 0 ? build : spawnSync(
      process.execPath,
      ['node_modules/@playwright/test/cli.js', 'test', '--config', 'web/e2e/playwright.config.ts', ...browserArgs],
      { stdio: 'inherit', env: { ...process.env, PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD: '1', CHROMIUM_PATH: chromium } },
    );
    if (status === 0) status = browser.status ?? 1;
  }
}

if (!process.env.TEST_DATABASE_URL) console.warn('!! Reminder: PostgreSQL tests were SKIPPED (TEST_DATABASE_URL not set).');
if (!process.env.TEST_REDIS_URL) console.warn('!! Reminder: Redis tests were SKIPPED (TEST_REDIS_URL not set).');
if (browserSkipped) {
  console.warn(`${line}\n!! BROWSER TESTS SKIPPED: no Chromium at ${chromium}.\n!! Install it (Debian: apt-get install -y chromium) or set CHROMIUM_PATH.\n${line}`);
}
process.exit(status);
