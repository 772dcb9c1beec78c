import type { APIRequestContext, Page } from '@playwright/test';
import {
  contentBox,
  createNote,
  expect,
  expectAccessible,
  expectContent,
  GOOD_PASSWORD,
  openHistory,
  signUp,
  test,
} from './fixtures';

/** The unsaved texts this browser keeps, as the editor wrote them to IndexedDB. */
const drafts = (page: Page) =>
  page.evaluate(
    () =>
      new Promise<string[]>((resolve) => {
        const open = indexedDB.open('vellum-drafts');
        open.onsuccess = () => {
          const all = open.result.transaction('drafts').objectStore('drafts').getAll();
          all.onsuccess = () => resolve((all.result as Array<{ content: string }>).map((d) => d.content));
        };
      }),
  );

test('typing never saved survives a reload; saving it clears it; typed on an older version it goes through the conflict check', async ({
  page,
  request,
}) => {
  const username = await signUp(page);
  const id = await createNote(page, 'Diary', 'saved line\n');

  await contentBox(page).fill('saved line\nnot saved yet\n');
  // The draft is written once the typing pauses; a reload then brings the text back.
  await expect.poll(() => drafts(page)).toEqual(['saved line\nnot saved yet\n']);
  await page.reload();
  await expectContent(page, 'saved line\nnot saved yet\n');
  const notice = page
    .getByRole('status')
    .filter({ hasText: 'Unsaved text from this device, typed on version 1, was restored.' });
  await expect(notice).toBeVisible();
  await expectAccessible(page, 'restored draft');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved as version 2' })).toBeVisible();
  await page.reload();
  await expectContent(page, 'saved line\nnot saved yet\n');
  await expect(notice).toHaveCount(0);
  expect(await drafts(page)).toEqual([]);

  // Typed here, saved elsewhere meanwhile (the live stream cut, as when the laptop was closed): the
  // restored text is offered against version 2, and saving shows the conflict, losing nothing.
  await page.route('**/api/events', (route) => route.abort('connectionreset'));
  await page.reload();
  await contentBox(page).fill('offline thoughts\n');
  await expect.poll(() => drafts(page)).toEqual(['offline thoughts\n']);
  const { access_token: token } = (await (
    await request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } })
  ).json()) as { access_token: string };
  expect(
    (
      await request.post(`/api/notes/${id}/versions`, {
        headers: { authorization: `Bearer ${token}` },
        data: { title: 'Diary', content: 'from the phone\n' },
      })
    ).status(),
  ).toBe(204);
  page.once('dialog', (dialog) => void dialog.accept());
  await page.reload();
  await expectContent(page, 'offline thoughts\n');
  await expect(page.getByRole('status').filter({ hasText: 'typed on version 2, was restored' })).toBeVisible();
  await page.getByRole('button', { name: 'Save' }).click();
  const conflict = page.getByRole('alert').filter({ hasText: 'This note changed since you opened it' });
  await expect(conflict).toContainText('Version 3 was saved elsewhere.');
  // Both texts are kept (the phone's first), unless one is chosen: nothing is dropped.
  await expect(conflict.getByRole('textbox', { name: 'Merged text' })).toHaveValue(
    'from the phone\noffline thoughts\n',
  );
  await conflict.getByRole('button', { name: 'Save merged text' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Saved as version 4' })).toBeVisible();
  await expectContent(page, 'from the phone\noffline thoughts\n');
  await expect(await openHistory(page, id)).toHaveText(['Version 4', 'Version 3', 'Version 2', 'Version 1']);
});

// The draft is written once the typing pauses (250 ms). A save's answer is rendered at once, but the
// effects that stop that pause run only after the next frame: a pause ending in between wrote the
// text just saved back as the new note's draft, and the next New note opened with it ("First", not
// "Untitled" — seen once in CI). The page's clock is the test's, so the pause ends exactly there.
test('a draft pause that ends just after the first save answers writes nothing: the next New note is blank', async ({
  page,
}) => {
  await page.clock.install();
  // When each pause will end, on the page's (fake) clock.
  await page.addInitScript(() => {
    const pauses: number[] = [];
    (window as unknown as { draftPauses: number[] }).draftPauses = pauses;
    const original = window.setTimeout;
    window.setTimeout = ((handler: TimerHandler, delay?: number, ...rest: unknown[]) => {
      if (delay === 250) pauses.push(Date.now() + delay);
      return original(handler, delay, ...rest);
    }) as typeof window.setTimeout;
  });
  await signUp(page);
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page.getByLabel('Title')).toHaveValue('Untitled');

  let release = () => {};
  const held = new Promise<void>((resolve) => {
    void page.route('**/api/notes', async (route) => {
      if (route.request().method() !== 'POST') return route.fallback();
      resolve();
      await new Promise<void>((go) => {
        release = go;
      });
      await route.fallback();
    });
  });
  await page.clock.pauseAt(await page.evaluate(() => Date.now() + 1000));
  await page.getByLabel('Title').fill('First');
  await page.clock.runFor(100);
  const pauseEnds = await page.evaluate(() => (window as unknown as { draftPauses: number[] }).draftPauses.at(-1)!);
  await page.getByRole('button', { name: 'Save' }).click();
  await held;
  // One millisecond before the pause ends, the save answers.
  await page.clock.runFor(pauseEnds - 1 - (await page.evaluate(() => Date.now())));
  release();
  await expect(page.getByRole('status').filter({ hasText: 'Saved as version 1' })).toBeVisible();
  await page.clock.runFor(50);
  expect(await drafts(page)).toEqual([]);

  await page.getByRole('button', { name: 'New note' }).click();
  await page.clock.runFor(50);
  await expect(page.getByLabel('Title')).toHaveValue('Untitled');
  await expect(page.getByText('Unsaved text of a new note from this device was restored.')).toHaveCount(0);
});

/** Holds the pauses after typing (250 ms) once `holdPauses` is set: their timers never fire. */
async function holdTypingPauses(page: Page): Promise<void> {
  await page.addInitScript(() => {
    const original = window.setTimeout;
    const w = window as unknown as { holdPauses?: boolean };
    window.setTimeout = ((handler: TimerHandler, delay?: number, ...rest: unknown[]) =>
      delay === 250 && w.holdPauses === true ? 0 : original(handler, delay, ...rest)) as typeof window.setTimeout;
  });
}

/** Signs every session of `username` out but a new one, as "Sign out everywhere else" on another device. */
async function endSessionsElsewhere(request: APIRequestContext, username: string): Promise<void> {
  const { access_token: token } = (await (
    await request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } })
  ).json()) as { access_token: string };
  const endOthers = await request.post('/api/auth/sessions/end-others', {
    headers: { authorization: `Bearer ${token}` },
    data: { password: GOOD_PASSWORD },
  });
  expect(endOthers.status()).toBe(200);
}

const SESSION_ENDED =
  'Your session has ended. Log in again to go on: unsaved text stays on this device and is offered back.';

/** Logs in on the login screen the ended session left, and finds the unsaved text offered back. */
async function logInAndFindText(page: Page, username: string, id: string, text: string): Promise<void> {
  await page.getByLabel('Username').fill(username);
  await page.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
  await page.getByRole('button', { name: 'Log in' }).click();
  await expect(page).toHaveURL(new RegExp(`/notes/${id}$`));
  await expectContent(page, text);
  await expect(
    page.getByRole('status').filter({ hasText: 'Unsaved text from this device, typed on version 1, was restored.' }),
  ).toBeVisible();
  await page.keyboard.press('Control+s');
  await expect(page.getByRole('status').filter({ hasText: 'Saved as version 2' })).toBeVisible();
}

// Issue #27, defect 3. The session ends for good (signed out everywhere from another device), and
// the access token in hand expires: the save's 401 cannot be refreshed. The 250 ms pause after the
// typing is held (its timer never fires), so the text is kept only because the editor writes it as
// it goes away. The event stream is held too: it would tell of the ended session first (next test).
test('the session ends while typing: the save says so on the login screen, and logging in again brings the text back', async ({
  page,
  request,
}) => {
  await holdTypingPauses(page);
  await page.route('**/api/events', () => {});
  const username = await signUp(page);
  const id = await createNote(page, 'Journal', 'kept line\n');
  await endSessionsElsewhere(request, username);
  // The save goes to …/versions?merge=true: a glob would have to spell the query out.
  await page.route(
    (url) => url.pathname === `/api/notes/${id}/versions`,
    (route) =>
      route.request().method() === 'POST'
        ? route.fulfill({
            status: 401,
            contentType: 'application/problem+json',
            body: JSON.stringify({ type: 'about:blank', title: 'Unauthorized', status: 401, detail: 'Token expired' }),
          })
        : route.fallback(),
  );

  await page.evaluate(() => {
    (window as unknown as { holdPauses: boolean }).holdPauses = true;
  });
  await contentBox(page).fill('kept line\nthe paragraph that used to vanish\n');
  await expect(page.getByText('Unsaved changes')).toBeVisible();
  expect(await drafts(page)).toEqual([]);
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Your session has ended.' })).toHaveText(SESSION_ENDED);
  await expect.poll(() => drafts(page)).toEqual(['kept line\nthe paragraph that used to vanish\n']);

  await page.unrouteAll();
  await logInAndFindText(page, username, id, 'kept line\nthe paragraph that used to vanish\n');
});

// The open page learns of the ended session from its event stream, which the server closes for it:
// the login screen shows without a click. Before, the editor stayed, and a save went through on the
// old access token (valid for its 15 minutes) — once it did in CI, racing the stream.
test('a session ended on another device signs the open page out at once, keeping what was typed', async ({
  page,
  request,
}) => {
  await holdTypingPauses(page);
  const username = await signUp(page);
  const id = await createNote(page, 'Journal', 'kept line\n');
  await page.evaluate(() => {
    (window as unknown as { holdPauses: boolean }).holdPauses = true;
  });
  await contentBox(page).fill('kept line\ntyped before the other device\n');
  await expect(page.getByText('Unsaved changes')).toBeVisible();

  await endSessionsElsewhere(request, username);
  await expect(page.getByRole('status').filter({ hasText: 'Your session has ended.' })).toHaveText(SESSION_ENDED);
  await expect.poll(() => drafts(page)).toEqual(['kept line\ntyped before the other device\n']);
  await logInAndFindText(page, username, id, 'kept line\ntyped before the other device\n');
});

// A tab that is killed (its renderer crashes: no pagehide, no beforeunload, no unmount) keeps what
// the pause wrote. Another tab of the same browser stays open meanwhile.
test('a killed tab loses nothing typed before the pause: the next tab offers it back', async ({ page, context }) => {
  await signUp(page);
  const id = await createNote(page, 'Crash', 'before\n');
  const other = await context.newPage();
  await contentBox(page).fill('before\nwhile the tab died\n');
  await expect.poll(() => drafts(page)).toEqual(['before\nwhile the tab died\n']);
  const crashed = page.waitForEvent('crash');
  const cdp = await context.newCDPSession(page);
  void cdp.send('Page.crash').catch(() => undefined);
  await crashed;

  await other.goto(`/notes/${id}`);
  await expectContent(other, 'before\nwhile the tab died\n');
  await expect(
    other.getByRole('status').filter({ hasText: 'Unsaved text from this device, typed on version 1, was restored.' }),
  ).toBeVisible();
});
