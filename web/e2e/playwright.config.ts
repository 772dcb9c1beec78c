import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { defineConfig } from '@playwright/test';

// The service under test: the real build (`npm run build` first; scripts/test.mjs does it), on a
// free port and a fresh SQLite file, throttling and the remote breach check off. The port is
// chosen once here and inherited by the worker processes through the environment.
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    }).on('error', reject);
  });
}
process.env.VELLUM_E2E_PORT ??= String(await freePort());
process.env.VELLUM_E2E_DB ??= path.join(os.tmpdir(), `vellum-e2e-${process.pid}-${Date.now()}.db`);
const port = process.env.VELLUM_E2E_PORT;
export const ADMIN = { username: 'admin', password: 'violet-Harbor-lantern-42-quietly' };

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
    baseURL: `http://127.0.0.1:${port}`,
    browserName: 'chromium',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-dev-shm-usage'],
    },
    trace: 'off',
  },
  webServer: {
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
      PWNED_PASSWORDS_URL: 'off',
      LOG_LEVEL: 'warn',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      NODE_ENV: 'development',
    },
  },
});
