import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BrowserContext, Page } from '@playwright/test';
import {
  contentBox,
  createNote,
  expect,
  expectContent,
  freePort,
  logIn,
  signUp,
  startService,
  test,
  uniqueName,
} from './fixtures';

const ROOT = path.resolve(import.meta.dirname, '../..');

// The service worker is what is tested here (playwright.config.ts blocks it elsewhere).
test.use({ serviceWorkers: 'allow' });

// The installable app and offline (issue 40): the service worker (sw.js) serves the app shell;
// notes seen before come from IndexedDB; what is written offline is kept and saved on reconnection.

/** Waits until the service worker is active (its precache complete) and controls this page. */
async function serviceWorkerReady(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await navigator.serviceWorker.ready;
  });
  // A page loaded before the worker was active is not controlled: a reload is.
  await page.reload();
  await expect.poll(() => page.evaluate(() => navigator.serviceWorker.controller !== null)).toBe(true);
  // The reload's session refresh answered (leaving during it would lose the rotated cookie).
  await expect(
    page.getByRole('button', { name: 'New note' }).or(page.getByRole('button', { name: 'Log in' })),
  ).toBeVisible();
}

const noteState = (page: Page) => page.locator('.toolbar .state');
const connection = (page: Page) => page.locator('p.connection');

async function goOffline(context: BrowserContext, page: Page): Promise<void> {
  await context.setOffline(true);
  await expect.poll(() => page.evaluate(() => navigator.onLine)).toBe(false);
}

test('installable: a manifest with icons, a service worker at the root served with no-cache', async ({
  page,
  request,
}) => {
  await page.goto('/');
  await expect(page.locator('link[rel="manifest"]')).toHaveAttribute('href', '/manifest.webmanifest');
  await expect(page.locator('meta[name="theme-color"]')).toHaveCount(2);
  const manifest = await request.get('/manifest.webmanifest');
  expect(manifest.status()).toBe(200);
  expect(manifest.headers()['content-type']).toContain('application/manifest+json');
  const body = (await manifest.json()) as {
    name: string;
    start_url: string;
    display: string;
    icons: { src: string }[];
  };
  expect(body).toMatchObject({ name: 'Vellum', start_url: '/', display: 'standalone' });
  expect(body.icons.length).toBeGreaterThanOrEqual(2);
  for (const icon of body.icons) {
    const png = await request.get(icon.src);
    expect(png.status()).toBe(200);
    expect(png.headers()['content-type']).toBe('image/png');
  }
  const sw = await request.get('/sw.js');
  expect(sw.status()).toBe(200);
  expect(sw.headers()['content-type']).toContain('javascript');
  expect(sw.headers()['cache-control']).toBe('no-cache');
  expect(sw.headers()['content-security-policy']).toContain("script-src 'self'");
  await serviceWorkerReady(page);
  expect(await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.scope)).toBe(
    new URL('/', page.url()).href,
  );
});

test('reload offline: the app opens with the notes seen before, their age said', async ({ page, context }) => {
  await signUp(page, undefined, undefined, { autosave: true });
  const id = await createNote(page, 'On the train', 'read me in a tunnel');
  await serviceWorkerReady(page);
  // Seen once more with the worker in control: the list and the note are kept on the device.
  await page.goto(`/notes/${id}`);
  await expectContent(page, 'read me in a tunnel');
  await page.goto('/');
  await expect(page.getByRole('link', { name: /On the train/ }).first()).toBeVisible();

  await goOffline(context, page);
  await page.reload();
  await expect(connection(page)).toHaveText(/^Offline — showing notes as of \d{1,2}:\d{2}/);
  await page
    .getByRole('link', { name: /On the train/ })
    .first()
    .click();
  await expectContent(page, 'read me in a tunnel');
  // History (versions) seen before opens too once seen: a version not seen is not invented.
  await context.setOffline(false);
});

test('written offline: kept on this device, saved by itself on reconnection (an open note and another), seen from a second browser', async ({
  page,
  context,
  browser,
}) => {
  const username = await signUp(page, undefined, undefined, { autosave: true });
  const id = await createNote(page, 'Diary', 'monday');
  await serviceWorkerReady(page);
  await expectContent(page, 'monday');

  await goOffline(context, page);
  await contentBox(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' tuesday');
  await expect(noteState(page)).toHaveText('Offline — kept on this device');
  await expect(connection(page)).toHaveText(/^Offline/);
  // No error that reads as if nothing was lost.
  await expect(page.getByText('nothing was changed')).toHaveCount(0);
  // Kept on the device (IndexedDB) before the page goes.
  await expect
    .poll(() =>
      page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const open = indexedDB.open('vellum-drafts');
            open.onsuccess = () => {
              const all = open.result.transaction('drafts').objectStore('drafts').getAll();
              all.onsuccess = () =>
                resolve((all.result as { content: string }[]).filter((d) => d.content.endsWith('tuesday')).length);
            };
          }),
      ),
    )
    .toBe(1);

  // Another page of the app, offline (the service worker opens it): a new note written there.
  page.on('dialog', (dialog) => void dialog.accept());
  await page.goto('/notes/new');
  await expect(page.getByLabel('Title')).toHaveValue('Untitled');
  // Leaving a note in the app offline keeps its text too (asked, and answered Leave).
  await page.goto(`/notes/${id}`);
  await expectContent(page, 'monday tuesday');
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page).toHaveURL(/\/notes\/new/);
  await expect(page.getByLabel('Title')).toHaveValue('Untitled');
  await page.getByLabel('Title').fill('Written in a tunnel');
  await contentBox(page).fill('no signal here');
  await expect(noteState(page)).toHaveText('Offline — kept on this device');

  // Back online: both saved with no click and no key.
  await context.setOffline(false);
  await expect(noteState(page)).toHaveText('Saved as version 1');
  await expect(connection(page)).toHaveText('');

  const other = await browser.newContext();
  const second = await other.newPage();
  await logIn(second, username);
  await expect(second.getByRole('link', { name: /Written in a tunnel/ }).first()).toBeVisible();
  await expect
    .poll(async () => {
      await second.goto(`/notes/${id}`);
      return (await second.locator('.cm-content').textContent()) ?? '';
    })
    .toBe('monday tuesday');
  await other.close();
});

test('a reconnection with the note open saves it by itself, with no key', async ({ page, context }) => {
  await signUp(page, undefined, undefined, { autosave: true });
  await createNote(page, 'Plans', 'one');
  await goOffline(context, page);
  await contentBox(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' two');
  await expect(noteState(page)).toHaveText('Offline — kept on this device');
  await context.setOffline(false);
  await expect(noteState(page)).toHaveText('Saved as version 2');
});

test('log out offline, log in as someone else: nothing of the first account on the device; no API answer cached', async ({
  page,
  context,
}) => {
  await signUp(page, uniqueName('first'), undefined, { autosave: true });
  const id = await createNote(page, 'Secret of the first', 'only mine');
  await serviceWorkerReady(page);
  await expectContent(page, 'only mine');
  await goOffline(context, page);
  // Unsaved text of the first account, kept on the device.
  await contentBox(page).click();
  await page.keyboard.type('draft ');
  await expect(noteState(page)).toHaveText('Offline — kept on this device');
  page.on('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Log out' }).click();
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
  await context.setOffline(false);

  await signUp(page, uniqueName('second'), undefined, { autosave: true });
  await expect(page.getByText('Secret of the first')).toHaveCount(0);
  await goOffline(context, page);
  await page.reload();
  await expect(connection(page)).toHaveText(/^Offline/);
  await expect(page.getByText('Secret of the first')).toHaveCount(0);
  await page.goto(`/notes/${id}`);
  await expect(page.getByText('only mine')).toHaveCount(0);

  const kept = await page.evaluate(async () => {
    const dump = (name: string) =>
      new Promise<string>((resolve) => {
        const open = indexedDB.open(name);
        open.onsuccess = () => {
          const db = open.result;
          const stores = Array.from(db.objectStoreNames);
          if (stores.length === 0) return resolve('');
          const tx = db.transaction(stores);
          const parts: unknown[] = [];
          for (const store of stores) {
            const all = tx.objectStore(store).getAll();
            const keys = tx.objectStore(store).getAllKeys();
            all.onsuccess = () => parts.push(all.result);
            keys.onsuccess = () => parts.push(keys.result);
          }
          tx.oncomplete = () => resolve(JSON.stringify(parts));
        };
      });
    const cached: string[] = [];
    for (const name of await caches.keys()) {
      const cache = await caches.open(name);
      for (const request of await cache.keys()) cached.push(new URL(request.url).pathname);
    }
    return { drafts: await dump('vellum-drafts'), offline: await dump('vellum-offline'), cached };
  });
  expect(kept.drafts).not.toContain('only mine');
  expect(kept.drafts).not.toContain('draft');
  expect(kept.offline).not.toContain('Secret of the first');
  expect(kept.offline).not.toContain(id);
  expect(kept.cached.length).toBeGreaterThan(0);
  expect(kept.cached.filter((p) => p.startsWith('/api/'))).toEqual([]);
  await context.setOffline(false);
});

test('a new version of the client is offered, never reloaded over unsaved text', async ({ browser }) => {
  // A service of this test's own, restarted on the same origin with a newer client (its sw.js differs).
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vellum-e2e-update-'));
  // The newer build beside the project's node_modules, so that its server finds its packages.
  fs.mkdirSync(path.join(ROOT, 'node_modules/.cache'), { recursive: true });
  const next = fs.mkdtempSync(path.join(ROOT, 'node_modules/.cache/vellum-e2e-next-'));
  const port = await freePort();
  const env = { JWT_SECRET: 'j'.repeat(40), CSRF_SECRET: 'c'.repeat(40) };
  const stop = async (child: ChildProcess) => {
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGTERM');
    await exited;
  };
  let running = (await startService(path.join(dir, 'vellum.db'), { port, env })).child;
  const context = await browser.newContext({ baseURL: `http://127.0.0.1:${port}`, serviceWorkers: 'allow' });
  try {
    const page = await context.newPage();
    await signUp(page, undefined, undefined, { autosave: false });
    await createNote(page, 'Long essay', 'chapter one');
    await serviceWorkerReady(page);
    await expectContent(page, 'chapter one');
    await contentBox(page).click();
    await page.keyboard.press('Control+End');
    await page.keyboard.type(' unsaved');
    await expect(noteState(page)).toHaveText('Unsaved changes');

    // A new client is deployed.
    await stop(running);
    fs.cpSync(process.env.VELLUM_E2E_DIST ?? path.join(ROOT, 'dist'), path.join(next, 'dist'), { recursive: true });
    const sw = path.join(next, 'dist/public/sw.js');
    fs.appendFileSync(sw, '\n// the next version\n');
    for (const copy of ['.br', '.gz']) fs.rmSync(sw + copy, { force: true });
    running = (await startService(path.join(dir, 'vellum.db'), { port, env, dist: path.join(next, 'dist') })).child;
    // The browser checks on navigation and now and then; here at once.
    await page.evaluate(async () => {
      await (await navigator.serviceWorker.getRegistration())?.update();
    });

    const prompt = page.getByRole('status').filter({ hasText: 'A new version of Vellum is ready' });
    await expect(prompt).toBeVisible();
    // Not reloaded by itself: the text is still on screen, unsaved.
    await expectContent(page, 'chapter one unsaved');
    await expect(noteState(page)).toHaveText('Unsaved changes');
    // Saved, then Reload: the new version takes over and the page reloads.
    await page.keyboard.press('Control+s');
    await expect(noteState(page)).toHaveText('Saved as version 2');
    const scriptBefore = await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL);
    await prompt.getByRole('button', { name: 'Reload' }).click();
    await expect(prompt).toHaveCount(0);
    await expectContent(page, 'chapter one unsaved');
    expect(await page.evaluate(() => navigator.serviceWorker.controller?.scriptURL)).toBe(scriptBefore);
    expect(
      await page.evaluate(async () => (await navigator.serviceWorker.getRegistration())?.waiting ?? null),
    ).toBeNull();
  } finally {
    await context.close();
    await stop(running);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.rmSync(next, { recursive: true, force: true });
  }
});

test('a full device: the draft refused is said plainly, the cache gives way, the next keystroke is kept', async ({
  page,
}) => {
  await signUp(page, undefined, undefined, { autosave: false });
  await createNote(page, 'Full disk', 'first');
  await expectContent(page, 'first');
  // The browser refuses the drafts' writes as a full disk does (QuotaExceededError at the put).
  await page.evaluate(() => {
    const put = IDBObjectStore.prototype.put;
    const w = window as unknown as { refuseDrafts: boolean };
    w.refuseDrafts = true;
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['put']>) {
      if (w.refuseDrafts && this.transaction.db.name === 'vellum-drafts')
        throw new DOMException('The quota has been exceeded.', 'QuotaExceededError');
      return put.apply(this, args);
    };
  });
  await contentBox(page).click();
  await page.keyboard.press('Control+End');
  await page.keyboard.type(' second');
  const full = page.getByRole('alert').filter({ hasText: 'Storage on this device is full' });
  await expect(full).toHaveText(
    'Storage on this device is full: what you type now is not kept on it. Save while online, or free some space.',
  );
  // Room again: the next keystroke's draft is kept and the line goes.
  await page.evaluate(() => {
    (window as unknown as { refuseDrafts: boolean }).refuseDrafts = false;
  });
  await page.keyboard.type('!');
  await expect(full).toHaveCount(0);
  await expect(noteState(page)).toHaveText('Unsaved changes');
});
