import type { Page } from '@playwright/test';
import { expect, GOOD_PASSWORD, signUp, test } from './fixtures';

// Measurements of issue 40, not tests: `VELLUM_E2E_BENCH=1 npx playwright test --config
// web/e2e/playwright.config.ts --grep @bench` (the config leaves @bench out otherwise). They print
// their figures; nothing is asserted on time.

test.use({ serviceWorkers: 'allow' });

const NOTES = Number(process.env.OFFLINE_BENCH_NOTES ?? 200);
/** A typical note: about a kilobyte of Markdown. */
const body = (i: number) =>
  `# Note ${i}\n\n${'Some words about the day, a list, a link to [elsewhere](https://example.org). '.repeat(12)}\n- one\n- two\n`;

async function token(page: Page, username: string): Promise<string> {
  const answer = await page.request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } });
  expect(answer.status()).toBe(200);
  return ((await answer.json()) as { access_token: string }).access_token;
}

async function makeNotes(page: Page, auth: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const made = await page.request.post('/api/notes', {
      headers: { authorization: `Bearer ${auth}` },
      data: { title: `Bench ${i}`, content: body(i) },
    });
    expect(made.status()).toBe(201);
    ids.push(((await made.json()) as { id: string }).id);
  }
  return ids;
}

const idbUsage = (page: Page) =>
  page.evaluate(async () => {
    const estimate = (await navigator.storage.estimate()) as StorageEstimate & {
      usageDetails?: { indexedDB?: number };
    };
    return { total: estimate.usage ?? 0, indexedDB: estimate.usageDetails?.indexedDB ?? null };
  });

const draftsLeft = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<number>((resolve) => {
        const open = indexedDB.open('vellum-drafts');
        open.onsuccess = () => {
          const count = open.result.transaction('drafts').objectStore('drafts').count();
          count.onsuccess = () => resolve(count.result);
        };
      }),
  );

test('@bench storage used on the device per 1,000 notes seen', async ({ page }) => {
  test.setTimeout(600_000);
  const username = await signUp(page);
  const ids = await makeNotes(page, await token(page, username), NOTES);
  await page.goto('/');
  await expect(page.getByRole('link', { name: /Bench/ }).first()).toBeVisible();
  const before = await idbUsage(page);
  for (const id of ids) {
    await page.evaluate((to) => {
      history.pushState(null, '', to);
      dispatchEvent(new PopStateEvent('popstate'));
    }, `/notes/${id}`);
    await expect(page.getByLabel('Title')).toHaveValue(/^Bench \d+$/);
  }
  // IndexedDB writes land a moment after the answers: every note's answer kept.
  await expect
    .poll(() =>
      page.evaluate(
        () =>
          new Promise<number>((resolve) => {
            const open = indexedDB.open('vellum-offline');
            open.onsuccess = () => {
              const count = open.result.transaction('answers').objectStore('answers').count();
              count.onsuccess = () => resolve(count.result);
            };
          }),
      ),
    )
    .toBeGreaterThanOrEqual(NOTES);
  const after = await idbUsage(page);
  const per1000 = (n: number) => `${(((n / NOTES) * 1000) / 1e6).toFixed(2)} MB`;
  console.log(
    `offline storage: ${NOTES} notes of ~${body(0).length} B seen: usage +${after.total - before.total} B (${per1000(after.total - before.total)} per 1,000 notes); IndexedDB +${
      after.indexedDB === null || before.indexedDB === null ? 'n/a' : after.indexedDB - before.indexedDB
    } B`,
  );
});

for (const count of [1, 20]) {
  test(`@bench reconnection to saved, ${count} note(s) edited offline`, async ({ page, context }) => {
    test.setTimeout(600_000);
    const username = await signUp(page, undefined, undefined, { autosave: true });
    const ids = await makeNotes(page, await token(page, username), count);
    // Seen once online (kept on the device), with the service worker in control.
    await page.evaluate(async () => {
      await navigator.serviceWorker.ready;
    });
    for (const id of ids) {
      await page.goto(`/notes/${id}`);
      await expect(page.getByLabel('Title')).toHaveValue(/^Bench \d+$/);
    }
    await context.setOffline(true);
    page.on('dialog', (dialog) => void dialog.accept());
    for (const [i, id] of ids.entries()) {
      await page.goto(`/notes/${id}`);
      await page.getByLabel('Title').fill(`Edited offline ${id.slice(0, 8)}`);
      await expect(page.locator('.toolbar .state')).toHaveText('Offline — kept on this device');
      // Kept (a moment after the typing pauses) before the page is left.
      await expect.poll(() => draftsLeft(page)).toBe(i + 1);
    }
    await expect.poll(() => draftsLeft(page)).toBe(count);
    const start = Date.now();
    await context.setOffline(false);
    await expect(page.locator('.toolbar .state')).toHaveText(/^Saved as version 2$/, { timeout: 120_000 });
    await expect.poll(() => draftsLeft(page), { timeout: 120_000, intervals: [20] }).toBe(0);
    console.log(`offline sync: ${count} note(s) edited offline, reconnection to all saved: ${Date.now() - start} ms`);
  });
}
