import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';
import { BREACHED_PASSWORD } from './constants';

// The service under test is started by each worker for itself (the `service` fixture in
// fixtures.ts: the real build on a free port and a SQLite file of its own). Shared by the workers:
// the breached-password range API, faked locally, on a port chosen here and inherited by the
// worker processes through the environment.
async function freePort(): Promise<number> {
  const server = await new Promise<net.Server>((resolve, reject) => {
    const listening = net
      .createServer()
      .listen(0, '127.0.0.1', () => resolve(listening))
      .on('error', reject);
  });
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}
process.env.VELLUM_E2E_BREACH_PORT ??= String(await freePort());

// Debian's headless shell (package chromium-headless-shell: Chromium's engine without the browser's
// UI, and Playwright's own choice for headless runs) when it is there, else the full Chromium. On
// two shared cores the shell ran the same 24 tests on 33 CPU-s against 60 (45 s of wall against 77).
// CHROMIUM_PATH chooses otherwise.
const chromium =
  process.env.CHROMIUM_PATH ??
  ['/usr/bin/chromium-headless-shell', '/usr/bin/chromium'].find((file) => fs.existsSync(file)) ??
  '/usr/bin/chromium';
const breachPort = process.env.VELLUM_E2E_BREACH_PORT;

export default defineConfig({
  testDir: '.',
  // Spec files are spread over the workers; the tests of one file run in order, in one worker.
  fullyParallel: false,
  // Two by default (scripts/test.mjs runs them beside the node tests on a 2-core machine);
  // VELLUM_E2E_WORKERS for a larger one.
  workers: Number(process.env.VELLUM_E2E_WORKERS ?? 2),
  forbidOnly: true,
  // Measurements (offline-bench.spec.ts) run only when asked: VELLUM_E2E_BENCH=1 … --grep @bench.
  ...(process.env.VELLUM_E2E_BENCH ? {} : { grepInvert: /@bench/ }),
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  outputDir: path.join(os.tmpdir(), 'vellum-e2e-results'),
  use: {
    browserName: 'chromium',
    launchOptions: {
      executablePath: chromium,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
        '--disable-dev-shm-usage',
      ],
    },
    trace: 'off',
    // The client's service worker (sw.js) would answer the app's files from its cache, past
    // page.route: off, except where a spec tests it (offline.spec.ts allows it).
    serviceWorkers: 'block',
  },
  webServer: {
    // The breached-password range API, faked locally: the service asks it as it would ask the real one.
    command: 'node web/e2e/fake-breach-api.mjs',
    cwd: path.resolve(import.meta.dirname, '../..'),
    url: `http://127.0.0.1:${breachPort}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: { PORT: breachPort, BREACHED_PASSWORDS: BREACHED_PASSWORD },
  },
});
