// What the screenshot scripts (web-screenshot.ts, web-screenshot-collab.ts) share: the built
// service on a free port with a throwaway SQLite file, and the system's Chromium.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Browser, chromium, type Page } from '@playwright/test';

export const repo = path.resolve(import.meta.dirname, '..');
export const PASSWORD = 'violet-Harbor-lantern-42-quietly';

export interface ShotService {
  base: string;
  browser: Browser;
  /** Stops the service and removes its database (the browser is the caller's to close first). */
  stop(): void;
}

/**
 * Starts `dist/main.js` (so `npm run build` first) with `env` over the settings every picture
 * needs, waits until it is ready, and launches Chromium (CHROMIUM_PATH, or Debian's).
 */
export async function startShotService(env: Record<string, string> = {}): Promise<ShotService> {
  const port = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const { port: free } = server.address() as net.AddressInfo;
      server.close(() => resolve(free));
    });
  });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-shot-'));
  const service = spawn(process.execPath, ['dist/main.js'], {
    cwd: repo,
    stdio: ['ignore', 'ignore', 'inherit'],
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${path.join(dir, 'shot.db')}`,
      RATE_LIMIT: 'off',
      PWNED_PASSWORDS_URL: 'off',
      LOG_LEVEL: 'warn',
      NODE_ENV: 'development',
      ...env,
    },
  });
  const stop = () => {
    service.kill();
    fs.rmSync(dir, { recursive: true, force: true });
  };
  const base = `http://127.0.0.1:${port}`;
  try {
    for (let ready = false; !ready; ) {
      ready = await fetch(`${base}/readyz`).then(
        (r) => r.ok,
        () => false,
      );
      if (!ready) await new Promise((r) => setTimeout(r, 200));
    }
    const browser = await chromium.launch({
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: ['--no-sandbox', '--disable-gpu'],
    });
    return { base, browser, stop };
  } catch (error) {
    stop();
    throw error;
  }
}

/** Signs `username` up on `page` (PASSWORD) and waits for the notes screen. */
export async function signUp(page: Page, base: string, username: string): Promise<void> {
  await page.goto(`${base}/signup`);
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await page.getByRole('button', { name: 'New note' }).waitFor();
}
