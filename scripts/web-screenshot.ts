// Regenerates docs/web-client.png, README's picture of the main screen (`npm run screenshot:web`
// after `npm run build`): starts the built service on a free port with a throwaway SQLite file,
// makes two folders and writes three tagged notes through the client in the system's Chromium, and
// photographs the sidebar, the list and the editor with its preview at 1280×640 (light scheme).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { chromium } from '@playwright/test';

const repo = path.resolve(import.meta.dirname, '..');
const out = path.join(repo, 'docs/web-client.png');
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
  env: { ...process.env, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `sqlite:${path.join(dir, 'shot.db')}`, RATE_LIMIT: 'off', PWNED_PASSWORDS_URL: 'off', LOG_LEVEL: 'warn', NODE_ENV: 'development' },
});
const base = `http://127.0.0.1:${port}`;

try {
  for (let ready = false; !ready;) {
    ready = await fetch(`${base}/readyz`).then((r) => r.ok, () => false);
    if (!ready) await new Promise((r) => setTimeout(r, 200));
  }
  const browser = await chromium.launch({ executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
  const page = await browser.newPage({ viewport: { width: 1280, height: 640 }, colorScheme: 'light' });
  await page.goto(`${base}/signup`);
  await page.getByLabel('Username').fill('ada');
  await page.getByLabel('Password', { exact: true }).fill('violet-Harbor-lantern-42-quietly');
  await page.getByRole('button', { name: 'Sign up' }).click();
  for (const folder of ['Travel', 'Work']) {
    // At the top level: a folder made while another is open goes inside it.
    await page.getByRole('navigation', { name: 'Folders' }).getByRole('link', { name: 'All notes' }).click();
    await page.getByRole('button', { name: 'New folder' }).click();
    await page.getByLabel('Folder name').fill(folder);
    await page.getByRole('button', { name: 'Create folder' }).click();
    await page.getByRole('heading', { level: 1, name: folder }).waitFor();
  }
  await page.getByRole('navigation', { name: 'Folders' }).getByRole('link', { name: 'All notes' }).click();
  const notes: Array<[string, string]> = [
    ['Reading list', '- The Mythical Man-Month\n- A Pattern Language\n\n#books'],
    ['Trip to Lisbon', '## Day 1\n\nTram 28, then the castle. #travel/portugal'],
    ['Meeting notes', '# Weekly sync\n\nDecisions:\n\n1. Ship the **web client** on Monday\n2. Keep *every* version\n\nSee [the docs](https://example.com/docs). #project/vellum'],
  ];
  for (const [title, content] of notes) {
    const before = page.url();
    await page.getByRole('button', { name: 'New note' }).click();
    await page.waitForURL((url) => url.href !== before && /\/notes\/[0-9a-f-]{36}$/.test(url.pathname));
    // Polled from here: a function evaluated in the page would need the 'unsafe-eval' the CSP refuses.
    for (let i = 0; i < 200 && (await page.getByLabel('Title').inputValue().catch(() => '')) !== 'Untitled'; i += 1) await page.waitForTimeout(50);
    await page.getByLabel('Title').fill(title);
    await page.getByRole('textbox', { name: 'Content', exact: true }).fill(content);
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved as version 2').waitFor();
  }
  await page.getByLabel('Folder', { exact: true }).selectOption({ label: 'Work' });
  await page.getByRole('button', { name: 'Move', exact: true }).click();
  await page.getByText('Moved to “Work”.').waitFor();
  await page.getByRole('button', { name: 'Pin', exact: true }).click();
  await page.getByRole('button', { name: 'Unpin' }).waitFor();
  await page.locator('.cm-editor').waitFor();
  await page.getByRole('button', { name: 'Preview' }).click();
  await page.getByRole('region', { name: 'Preview' }).getByRole('heading', { name: 'Weekly sync' }).waitFor();
  await page.screenshot({ path: out });
  await browser.close();
  console.log(`Wrote ${path.relative(process.cwd(), out)} (${fs.statSync(out).size} bytes)`);
} finally {
  service.kill();
  fs.rmSync(dir, { recursive: true, force: true });
}
