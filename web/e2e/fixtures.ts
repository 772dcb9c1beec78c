import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test as base, expect, type Locator, type Page } from '@playwright/test';
import { type MailServer, startMailServer } from '../../test/helpers/mail-server';
import { ADMIN, BREACHED_PASSWORD } from './constants';

export { expect };

export const GOOD_PASSWORD = 'violet-Harbor-lantern-42-quietly';
export { ADMIN, BREACHED_PASSWORD };

const ROOT = path.resolve(import.meta.dirname, '../..');

/** One Playwright worker's own service: the real build on its own port and its own SQLite file. */
export interface Service {
  /** The service's own origin (the pages' baseURL). */
  origin: string;
  /** The same server under another name (http://localhost), allowed by CORS_ORIGINS; passkeys use it. */
  crossOrigin: string;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net
      .createServer()
      .listen(0, '127.0.0.1', () => {
        const { port } = server.address() as net.AddressInfo;
        server.close(() => resolve(port));
      })
      .on('error', reject);
  });
}

/** Resolves once GET /readyz answers 200; rejects if the process exits first. */
async function ready(origin: string, child: ChildProcess, output: () => string): Promise<void> {
  for (let i = 0; ; i++) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`the service exited (${child.exitCode ?? child.signalCode}):\n${output()}`);
    const ok = await fetch(`${origin}/readyz`).then(
      (r) => r.ok,
      () => false,
    );
    if (ok) return;
    if (i > 600) throw new Error(`the service was not ready after 60 s:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/**
 * Starts the service on `database`. `options` for a spec that runs a service of its own: on a
 * given port (the same origin again after a restart), from another build (`dist`), with more
 * settings (`env`).
 */
export async function startService(
  database: string,
  options: { port?: number; dist?: string; env?: Record<string, string> } = {},
): Promise<{ service: Service; child: ChildProcess }> {
  // `npm run build` first (scripts/test.mjs does it, or hands over the image test's build).
  const dist = options.dist ?? process.env.VELLUM_E2E_DIST ?? path.join(ROOT, 'dist');
  const breachPort = process.env.VELLUM_E2E_BREACH_PORT;
  if (breachPort === undefined)
    throw new Error('VELLUM_E2E_BREACH_PORT is not set (web/e2e/playwright.config.ts sets it)');
  const port = options.port ?? (await freePort());
  const service = { origin: `http://127.0.0.1:${port}`, crossOrigin: `http://localhost:${port}` };
  const child = spawn(process.execPath, [path.join(dist, 'main.js')], {
    cwd: ROOT,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: {
      PATH: process.env.PATH ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATABASE_URL: `sqlite:${database}`,
      RATE_LIMIT: 'off',
      PWNED_PASSWORDS_URL: `http://127.0.0.1:${breachPort}`,
      LOG_LEVEL: 'warn',
      ADMIN_USERNAME: ADMIN.username,
      ADMIN_PASSWORD: ADMIN.password,
      // The test-only Argon2 cost (refused unless NODE_ENV=test): the browser tests sign up often.
      NODE_ENV: 'test',
      TEST_ARGON2: 'cheap',
      // Specs count a new account's notes from none (the welcome note: test/notes/welcome.test.ts).
      WELCOME_NOTE: 'off',
      CORS_ORIGINS: service.crossOrigin,
      // Passkeys need a host name: the passkey tests use the localhost origin.
      PUBLIC_URL: service.crossOrigin,
      ...options.env,
    },
  });
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += String(chunk);
    process.stderr.write(chunk);
  });
  try {
    await ready(service.origin, child, () => stderr);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return { service, child };
}

/**
 * A service of a spec's own (its own SQLite file, these settings), for the length of `run`; then
 * stopped and its files removed. For a worker fixture: `async ({}, use) => ownService('x', env, use)`.
 */
export async function ownService(
  name: string,
  env: Record<string, string>,
  run: (service: Service) => Promise<void>,
): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vellum-e2e-${name}-`));
  let started: { service: Service; child: ChildProcess } | undefined;
  try {
    started = await startService(path.join(dir, 'vellum.db'), { env });
    await run(started.service);
  } finally {
    if (started !== undefined) {
      const { child } = started;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** `ownService` with a mail server whose address the service sends to (SMTP_URL, MAIL_FROM). */
export async function ownServiceWithMail(
  name: string,
  env: Record<string, string>,
  run: (team: { service: Service; mail: MailServer }) => Promise<void>,
): Promise<void> {
  const mail = await startMailServer();
  try {
    await ownService(name, { SMTP_URL: mail.url, MAIL_FROM: 'vellum@example.test', ...env }, (service) =>
      run({ service, mail }),
    );
  } finally {
    await mail.close();
  }
}

/**
 * `test` with a service per worker: each Playwright worker starts its own server on its own SQLite
 * file (the admin account is made from the environment on each), so specs in two workers share no
 * data. The fake breach API (playwright.config.ts) is shared: it only answers lookups.
 */
export const test = base.extend<object, { service: Service }>({
  service: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this destructuring; it has none
    async ({}, use, workerInfo) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), `vellum-e2e-${workerInfo.workerIndex}-`));
      let started: { service: Service; child: ChildProcess } | undefined;
      // A port taken between choosing and listening: once more on another.
      for (let attempt = 1; started === undefined; attempt++) {
        try {
          started = await startService(path.join(dir, 'vellum.db'));
        } catch (error) {
          if (attempt === 3) throw error;
        }
      }
      await use(started.service);
      const { child } = started;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(killer);
      fs.rmSync(dir, { recursive: true, force: true });
    },
    { scope: 'worker', timeout: 90_000 },
  ],
  baseURL: async ({ service }, use) => use(service.origin),
  // A route handler still awaiting route.fetch() when its test ends throws into whichever test the
  // worker runs next (CI once failed first-visit.spec on first-screen.spec's /auth/me handler).
  page: async ({ page }, use) => {
    await use(page);
    await page.unrouteAll({ behavior: 'ignoreErrors' });
  },
});

let counter = 0;
export function uniqueName(prefix = 'u'): string {
  counter += 1;
  return `${prefix}${counter}${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * axe-core itself, put into a document once and run there for each check. @axe-core/playwright
 * sent its 580 kB through the DevTools protocol and had the page compile it again on every check
 * (about a second of a check's time here, on a busy machine); the app has no frames for it to
 * walk into, so running axe in the page is the same check.
 */
const AXE_SOURCE = fs.readFileSync(path.join(ROOT, 'node_modules', 'axe-core', 'axe.min.js'), 'utf8');

interface AxeViolation {
  id: string;
  impact?: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** No serious or critical axe-core violation on the page as it is now. */
export async function expectAccessible(page: Page, screen: string): Promise<void> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(AXE_SOURCE);
  expect(await page.locator('iframe, frame').count(), `${screen} has no frames for axe to miss`).toBe(0);
  const violations = await page.evaluate(async () => {
    const { axe } = window as unknown as {
      axe: { run(context: Document, options: object): Promise<{ violations: AxeViolation[] }> };
    };
    return (await axe.run(document, { resultTypes: ['violations'] })).violations;
  });
  const bad = violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} — ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
  expect(bad, `axe violations on ${screen}`).toEqual([]);
}

/**
 * The specs of saving by hand, unsaved text and conflicts run with autosave off (Account,
 * "Editing"): with it on, text stays unsaved only for the two seconds after the last key, and those
 * flows would race the automatic save. autosave.spec.ts tests the default, with the page's clock.
 * `reading: true` makes notes open for reading (Account, "Editing"; off by default), for
 * reading.spec.ts. Live co-editing is off too unless `live: true` (collab.spec.ts): the specs of
 * saving, drafts and conflicts are about the editor without a live session.
 */
interface DeviceChoices {
  autosave?: boolean;
  reading?: boolean;
  /** Live co-editing (Account, "Editing"; on by default in the app): off unless a spec asks, as autosave. */
  live?: boolean;
}
async function chooseOnDevice(
  page: Page,
  { autosave = false, reading = false, live = false }: DeviceChoices,
): Promise<void> {
  // Run on every page load: a choice the spec leaves alone is not touched, so a spec can change it
  // in Account and see it kept.
  await page.addInitScript(
    ([save, read, together]) => {
      if (!save) localStorage.setItem('vellum.autosave', 'off');
      if (!together && localStorage.getItem('vellum.live') === null) localStorage.setItem('vellum.live', 'off');
      if (read && localStorage.getItem('vellum.reading') === null) localStorage.setItem('vellum.reading', 'on');
    },
    [autosave, reading, live],
  );
}

export async function signUp(
  page: Page,
  username = uniqueName(),
  password = GOOD_PASSWORD,
  options: DeviceChoices = {},
): Promise<string> {
  await chooseOnDevice(page, options);
  await page.goto('/signup');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Sign up' }).click();
  await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
  return username;
}

export async function logIn(
  page: Page,
  username: string,
  password = GOOD_PASSWORD,
  options: DeviceChoices = {},
): Promise<void> {
  await chooseOnDevice(page, options);
  await page.goto('/');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(password);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
}

/** The note's editing surface (CodeMirror's, or the plain box while CodeMirror loads). */
export function contentBox(page: Page): Locator {
  return page.getByRole('textbox', { name: 'Content', exact: true });
}

/**
 * CodeMirror's documented way out for the keyboard: Escape, then Tab (or Shift+Tab). Escape holds
 * for 2 s by the page's clock; on a starved machine the next key can land later and indent (or
 * outdent) the line instead. Then the other key puts the line back and the pair is pressed again,
 * until the focus leaves; callers check the text is as it was.
 */
export async function leaveEditor(page: Page, key: 'Tab' | 'Shift+Tab'): Promise<void> {
  const box = contentBox(page);
  const inside = () => box.evaluate((el) => (el.getRootNode() as Document | ShadowRoot).activeElement === el);
  const before = await box.locator('.cm-line').allTextContents();
  await expect(async () => {
    await page.keyboard.press('Escape');
    await page.keyboard.press(key);
    if (!(await inside())) return;
    const after = await box.locator('.cm-line').allTextContents();
    if (after.join('\n') !== before.join('\n')) await page.keyboard.press(key === 'Tab' ? 'Shift+Tab' : 'Tab');
    throw new Error(`Escape, then ${key}, stayed in the editor`);
  }).toPass();
}

/** The text as CodeMirror shows it, line by line (so this also waits for CodeMirror). */
export async function expectContent(page: Page, text: string): Promise<void> {
  await expect(contentBox(page).locator('.cm-line')).toHaveText(text.split('\n'));
}

/** Creates a note through the UI (New note, then Save: the first save creates it); returns its id. */
export async function createNote(page: Page, title: string, content: string): Promise<string> {
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page).toHaveURL(/\/notes\/new(\?[^/]*)?$/);
  await expect(page.getByLabel('Title')).toHaveValue('Untitled');
  await page.getByLabel('Title').fill(title);
  await contentBox(page).fill(content);
  await page.getByRole('button', { name: 'Save' }).click();
  // With live editing on, the new note goes live at once and the toolbar's status becomes
  // "Live · Saved": "Saved as version 1" may be gone before it is looked for (CI missed it once).
  await expect(page.getByRole('status').filter({ hasText: /^(Saved as version 1|Live · Saved)$/ })).toBeVisible();
  await expect(page).toHaveURL(/\/notes\/[0-9a-f-]{36}(\?[^/]*)?$/);
  return new URL(page.url()).pathname.split('/').pop()!;
}

/** Replaces the open note's content and saves it with Ctrl+S as version `version`. */
export async function saveContent(page: Page, content: string, version: number): Promise<void> {
  await contentBox(page).fill(content);
  await page.keyboard.press('Control+s');
  await expect(page.getByText(`Saved as version ${version}`)).toBeVisible();
}

/** Opens the open note's history; returns its version buttons, newest first. */
export async function openHistory(page: Page, id: string): Promise<Locator> {
  await page.getByRole('button', { name: 'History' }).click();
  await expect(page).toHaveURL(new RegExp(`/notes/${id}/history$`));
  return page
    .getByRole('navigation', { name: 'Versions, newest first' })
    .getByRole('button', { name: /^Version \d+$/ });
}
