import type { Page, Request } from '@playwright/test';
import { expect, GOOD_PASSWORD, signUp, test } from './fixtures';

// What a first visit waits for on a slow network: the scripts and styles index.html loads, as the
// wire carried them (the build's Brotli copies). The same 60 kB `npm run size:web` holds the build
// to (gzipped there); the other screens and panels are chunks of their own, fetched when opened.
const FIRST_SCREEN_BYTES = 60_000;
const OTHER_SCREENS =
  /\/assets\/(account|enrolment|security|passkey|admin|history|trash|share-panel|conflict-panel)-[\w-]+\.js$/;

/** Every finished request of the page under /assets/, with the bytes of its body on the wire. */
function assetsOf(page: Page): { sizes: () => Promise<Map<string, number>> } {
  const finished: Request[] = [];
  page.on('requestfinished', (request) => {
    if (new URL(request.url()).pathname.startsWith('/assets/')) finished.push(request);
  });
  return {
    sizes: async () =>
      new Map(
        await Promise.all(
          finished.map(async (r) => [new URL(r.url()).pathname, (await r.sizes()).responseBodySize] as const),
        ),
      ),
  };
}

test('the login page and the notes carry only their own code, the first screen within 60 kB', async ({
  page,
  request,
}) => {
  const html = await (await request.get('/login')).text();
  const linked = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  expect(linked.length).toBeGreaterThan(1);

  const assets = assetsOf(page);
  await page.goto('/login');
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
  const onLogin = await assets.sizes();
  let bytes = 0;
  for (const file of linked) {
    expect(onLogin.has(file), `${file} is loaded`).toBe(true);
    bytes += onLogin.get(file)!;
  }
  expect(bytes).toBeLessThanOrEqual(FIRST_SCREEN_BYTES);
  expect([...onLogin.keys()].filter((file) => OTHER_SCREENS.test(file))).toEqual([]);

  await signUp(page);
  expect([...(await assets.sizes()).keys()].filter((file) => OTHER_SCREENS.test(file))).toEqual([]);
  // Another screen fetches its own code when it is opened.
  await page.getByRole('link', { name: 'Account' }).click();
  await expect(page.getByRole('heading', { name: 'Account', level: 1 })).toBeVisible();
  expect([...(await assets.sizes()).keys()].some((file) => /\/assets\/account-[\w-]+\.js$/.test(file))).toBe(true);
});

test('a screen whose code cannot be fetched says so, and Try again opens it', async ({ page }) => {
  await signUp(page);
  const trashChunk = /\/assets\/trash-[\w-]+\.js$/;
  await page.route(trashChunk, (route) => route.abort());
  await page.goto('/trash');
  await expect(page.getByRole('alert')).toHaveText(/This part of Vellum could not be loaded; check the connection\./);
  await page.unroute(trashChunk);
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByRole('heading', { name: 'Trash', level: 1 })).toBeVisible();
});

/**
 * When a finished request's answer began to arrive, in the browser's clock (epoch ms): always before
 * the page could have read it. Not when it ended: the network service stamps the end when it reports
 * completion, which can come after the page has read the whole (small) body and moved on (the chunk
 * was asked for 6.5 ms before /api/tags's end stamp in one loaded CI run; 20-60 ms after its first
 * byte here, and 1-3 ms before it when the prefetch was moved to the screen's first render).
 */
function answeredAt(request: Request): number {
  const timing = request.timing();
  return timing.startTime + timing.responseStart;
}

test("the editor's code is fetched while the list is read, after the list's own requests", async ({ page }) => {
  const editorChunk = /\/assets\/codemirror-[\w-]+\.js$/;
  // The list's requests when it first shows: its notes, folders and tags (the first of each).
  const listRequests = new Map<string, Request>();
  page.on('requestfinished', (request) => {
    const path = new URL(request.url()).pathname;
    if (/^\/api\/(notes|folders|tags)$/.test(path) && !listRequests.has(path)) listRequests.set(path, request);
  });
  const editorRequests: Request[] = [];
  page.on('request', (request) => {
    if (editorChunk.test(new URL(request.url()).pathname)) editorRequests.push(request);
  });
  const editorFetched = page.waitForEvent('requestfinished', (r) => editorChunk.test(new URL(r.url()).pathname));

  await signUp(page);
  // Nobody pressed New note or opened a note: the chunk comes anyway.
  const fetched = await editorFetched;
  expect(editorRequests).toHaveLength(1);
  expect([...listRequests.keys()].sort()).toEqual(['/api/folders', '/api/notes', '/api/tags']);
  // It did not share the wire with the list: it started once the list's answers had all come in.
  const started = fetched.timing().startTime;
  for (const request of listRequests.values()) {
    expect(started, request.url()).toBeGreaterThanOrEqual(answeredAt(request));
  }

  // New note finds it loaded: CodeMirror shows without fetching it again.
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page.locator('.cm-editor')).toBeVisible();
  expect(editorRequests).toHaveLength(1);
});

test("a screen's code is fetched when the pointer or the keyboard reaches its link", async ({ page }) => {
  await signUp(page);
  const nav = page.getByRole('navigation', { name: 'Main' });
  const chunk = (name: string) => (r: Request) => new RegExp(`/assets/${name}-[\\w-]+\\.js$`).test(r.url());

  const trash = page.waitForEvent('requestfinished', chunk('trash'));
  await nav.getByRole('link', { name: 'Trash' }).hover();
  await trash;

  const account = page.waitForEvent('requestfinished', chunk('account'));
  await nav.getByRole('link', { name: 'Account' }).focus();
  await account;
  await nav.getByRole('link', { name: 'Account' }).press('Enter');
  await expect(page.getByRole('heading', { name: 'Account', level: 1 })).toBeVisible();
});

test('an account sent to set up a second factor first gets there though its notes were asked for beside', async ({
  page,
  browser,
}) => {
  const other = await browser.newPage();
  const username = await signUp(other);
  await other.close();
  // REQUIRE_SECOND_FACTOR's answer, as GET /auth/me gives it to an account it covers.
  await page.route('**/api/auth/me', async (route) => {
    const response = await route.fetch();
    await route.fulfill({ response, json: { ...(await response.json()), mfa_enrolment_required: true } });
  });
  await page.goto('/');
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page.getByRole('heading', { name: 'Set up a second factor', level: 1 })).toBeVisible();
  await expect(page.getByRole('button', { name: 'New note' })).toHaveCount(0);
});
