import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

// The service under test: the real build (`npm run build` first; scripts/test.mjs does it), on a
// free port and a fresh SQLite file, throttling off, the breach check asking a local fake. The ports are
// chosen once here and inherited by the worker processes through the environment.
/** Distinct free ports: all are held open until every one is chosen, then released. */
async function freePorts(count: number): Promise<number[]> {
  const servers = await Promise.all(Array.from({ length: count }, () => new Promise<net.Server>((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => resolve(server)).on('error', reject);
  })));
  const ports = servers.map((server) => (server.address() as net.AddressInfo).port);
  await Promise.all(servers.map((server) => new Promise((resolve) => server.close(resolve))));
  return ports;
}
if (process.env.VELLUM_E2E_PORT === undefined || process.env.VELLUM_E2E_BREACH_PORT === undefined) {
  const [service, breach] = await freePorts(2);
  process.env.VELLUM_E2E_PORT = String(service);
  process.env.VELLUM_E2E_BREACH_PORT = String(breach);
}
process.env.VELLUM_E2E_DB ??= path.join(os.tmpdir(), `vellum-e2e-${process.pid}-${Date.now()}.db`);
const port = process.env.VELLUM_E2E_PORT;
const breachPort = process.env.VELLUM_E2E_BREACH_PORT;
/** The service's own origin, and the same server under another name, allowed by CORS_ORIGINS. */
export const API_ORIGIN = `http://127.0.0.1:${port}`;
export const CROSS_ORIGIN = `http://localhost:${port}`;
export const ADMIN = { username: 'admin', password: 'violet-Harbor-lantern-42-quietly' };
/** Long and varied enough for every local rule; only the (fake) breach API refuses it. */
export const BREACHED_PASSWORD = 'Maple-syrup-Orbit-77-thunder-kettle';

export default defineConfig({
  testDir: '.',
  fullyParallel: false,
  workers: 1,
  forbidOnly: true,
  retries: 0,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  outputDir: path.join(os.tmpdir(), 'vellum-e2e-results'),
  use: {
    baseURL: API_ORIGIN,
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    },
    trace: 'off',
  },
  webServer: [{
    // The breached-password range API, faked locally: the service asks it as it would ask the real one.
    command: 'node web/e2e/fake-breach-api.mjs',
    cwd: path.resolve(import.meta.dirname, '../..'),
    url: `http://127.0.0.1:${breachPort}/healthz`,
    reuseExistingServer: false,
    timeout: 30_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: { PORT: breachPort!, BREACHED_PASSWORDS: BREACHED_PASSWORD },
  }, {
    command: 'node dist/main.js',
    cwd: path.resolve(import.meta.dirname, '../..'),
    url: `http://127.0.0.1:${port}/readyz`,
    reuseExistingServer: false,
    timeout: 60_000,
    stdout: 'ignore',
    stderr: 'pipe',
    env: {
      PORT: port,
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${process.env.VELLUM_E2E_DB}`,
      RATE_LIMIT: 'off',
      PWNED_PASSWORDS_URL: `http://127.0.0.1:${breachPort}`,
      LOG_LEVEL: 'warn',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      // The test-only Argon2 cost (refused unless NODE_ENV=test): the browser tests sign up often.
      NODE_ENV: 'test',
      TEST_ARGON2: 'cheap',
      CORS_ORIGINS: CROSS_ORIGIN,
      // Passkeys need a host name: the passkey tests use the localhost origin.
      PUBLIC_URL: CROSS_ORIGIN,
    },
  }],
});
