import type { Page } from '@playwright/test';
import { contentBox, createNote, expect, expectContent, GOOD_PASSWORD, signUp, test } from './fixtures';

// Issue #27 (a client people trust with their writing), the parts done so far. Typing that gets
// lost (1, 2, 4): every way out of a note with unsaved text asks,
// and Cancel means stay — with the text.

const LEAVE = 'This note has unsaved changes. Leave without saving?';

async function typeUnsaved(page: Page, text: string): Promise<void> {
  await contentBox(page).click();
  await page.keyboard.press('End');
  await page.keyboard.type(text);
  await expect(page.getByText('Unsaved changes')).toBeVisible();
}

/** Runs `act`, answers the one dialog it raises, and returns that dialog's message. */
async function answering(page: Page, act: () => Promise<unknown>, accept: boolean): Promise<string> {
  const dialog = page.waitForEvent('dialog');
  const acting = act();
  const asked = await dialog;
  const message = asked.message();
  await (accept ? asked.accept() : asked.dismiss());
  await acting;
  return message;
}

test('Back from a note with unsaved text asks; Cancel stays on it with the text, OK goes back', async ({ page }) => {
  await signUp(page);
  const first = await createNote(page, 'First', 'one');
  await createNote(page, 'Second', 'two');
  await typeUnsaved(page, ' and more');

  expect(await answering(page, () => page.goBack(), false)).toBe(LEAVE);
  await expect(page).not.toHaveURL(new RegExp(first));
  await expect(page.getByLabel('Title')).toHaveValue('Second');
  await expectContent(page, 'two and more');

  expect(await answering(page, () => page.goBack(), true)).toBe(LEAVE);
  await expect(page.getByLabel('Title')).toHaveValue('First');
});

test('Log out with unsaved text asks; Cancel stays signed in with the text', async ({ page }) => {
  await signUp(page);
  await createNote(page, 'Draft', 'keep');
  await typeUnsaved(page, ' this');
  expect(await answering(page, () => page.getByRole('button', { name: 'Log out', exact: true }).click(), false)).toBe(
    LEAVE,
  );
  await expect(page.getByRole('button', { name: 'Log out', exact: true })).toBeVisible();
  await expectContent(page, 'keep this');
  // Saved, it logs out without a question.
  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 2')).toBeVisible();
  const dialogs: string[] = [];
  page.on('dialog', (d) => {
    dialogs.push(d.message());
    void d.dismiss();
  });
  await page.getByRole('button', { name: 'Log out', exact: true }).click();
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
  expect(dialogs).toEqual([]);
});

test('Delete with unsaved text asks first; Cancel keeps the note and the text', async ({ page }) => {
  await signUp(page);
  await createNote(page, 'Careful', 'saved part');
  await typeUnsaved(page, ' unsaved part');
  const message = await answering(page, () => page.getByRole('button', { name: 'Delete', exact: true }).click(), false);
  expect(message).toBe('This note has unsaved changes, which the trash will not keep. Delete it anyway?');
  await expect(page.getByLabel('Title')).toHaveValue('Careful');
  await expectContent(page, 'saved part unsaved part');
  await answering(page, () => page.getByRole('button', { name: 'Delete', exact: true }).click(), true);
  await expect(page.getByText('“Careful” moved to the trash.')).toBeVisible();
});

test('Save without a change makes no version; Skip to content moves the focus to the content', async ({ page }) => {
  await signUp(page);
  await createNote(page, 'Same', 'text');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('No changes to save')).toBeVisible();
  await page.getByRole('button', { name: 'History' }).click();
  await expect(
    page.getByRole('navigation', { name: 'Versions, newest first' }).getByRole('button', { name: /^Version \d+$/ }),
  ).toHaveText(['Version 1']);

  await page.goto('/');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await skip.focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('main')).toBeFocused();
});

test('the history of a note that does not exist says so, without "Loading…" forever', async ({ page }) => {
  await signUp(page);
  await page.goto('/notes/00000000-0000-4000-8000-000000000000/history');
  await expect(page.getByRole('alert')).toHaveText('Note not found');
  await expect(page.getByText('No versions to show.')).toBeVisible();
  await expect(page.getByText('Loading…')).toHaveCount(0);
});

test('New note puts the focus in its title, selected; opening a note from the list moves the focus to it', async ({
  page,
}) => {
  await signUp(page);
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page.getByLabel('Title')).toBeFocused();
  await page.keyboard.type('Typed at once');
  await expect(page.getByLabel('Title')).toHaveValue('Typed at once');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByText('Saved as version 1')).toBeVisible();
  await page.getByRole('link', { name: /^Typed at once/ }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
  await page.getByRole('link', { name: /^Typed at once/ }).focus();
  await page.keyboard.press('Enter');
  await expect(page.getByRole('form', { name: 'Note' })).toBeFocused();
  // The next Tab reaches the note's own controls, not the rest of the list.
  await page.keyboard.press('Tab');
  await expect(
    page.getByRole('link', { name: '← Notes' }).or(page.getByRole('button', { name: 'Save' })),
  ).toBeFocused();
});

test('New note creates nothing on the server until its first save: left untouched it leaves nothing behind', async ({
  page,
  request,
}) => {
  const username = await signUp(page);
  const login = await request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const listed = async () =>
    (await (await request.get('/api/notes', { headers: { authorization: `Bearer ${token}` } })).json()) as Array<{
      title: string;
    }>;

  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page).toHaveURL(/\/notes\/new$/);
  await expect(page.getByRole('status').filter({ hasText: 'New note, not saved yet' })).toBeVisible();
  // Nothing to look back on or delete yet.
  await expect(page.getByRole('button', { name: 'History' })).toHaveCount(0);
  await expect(page.getByRole('button', { name: 'Delete' })).toHaveCount(0);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByText('No notes yet.')).toBeVisible();
  expect(await listed()).toEqual([]);

  // The first save creates it, as version 1; the typing goes on where it was.
  await page.getByRole('button', { name: 'New note' }).click();
  await page.keyboard.type('Groceries');
  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 1')).toBeVisible();
  await expect(page).toHaveURL(/\/notes\/[0-9a-f-]{36}$/);
  await expect(page.getByLabel('Title')).toBeFocused();
  await expect(page.getByRole('link', { name: /^Groceries/ })).toBeVisible();
  expect((await listed()).map((n) => n.title)).toEqual(['Groceries']);
  const id = new URL(page.url()).pathname.split('/').pop()!;
  const note = (await (
    await request.get(`/api/notes/${id}`, { headers: { authorization: `Bearer ${token}` } })
  ).json()) as { title: string; version: number };
  expect([note.title, note.version]).toEqual(['Groceries', 1]);

  // Typed into a new note and never saved: a reload brings it back, still unsaved and still only here.
  await page.getByRole('button', { name: 'New note' }).click();
  await page.keyboard.type('Half an idea');
  await expect(page.getByText('Unsaved changes')).toBeVisible();
  // Written to the device once the typing pauses.
  await expect
    .poll(() =>
      page.evaluate(
        () =>
          new Promise<string[]>((resolve) => {
            const open = indexedDB.open('vellum-drafts');
            open.onsuccess = () => {
              const all = open.result.transaction('drafts').objectStore('drafts').getAll();
              all.onsuccess = () => resolve((all.result as Array<{ title: string }>).map((d) => d.title));
            };
          }),
      ),
    )
    .toEqual(['Half an idea']);
  await page.reload();
  await expect(
    page.getByRole('status').filter({ hasText: 'Unsaved text of a new note from this device was restored.' }),
  ).toBeVisible();
  await expect(page.getByLabel('Title')).toHaveValue('Half an idea');
  expect(await listed()).toHaveLength(1);
});

test('a long list: 1,000 notes all reachable by scrolling, with previews and the count; few rows on the page; Save stays in reach', async ({
  page,
  request,
}) => {
  // A thousand notes imported, then walked through half a box at a time: more than a minute on a
  // busy machine.
  test.setTimeout(180_000);
  await page.setViewportSize({ width: 1280, height: 720 });
  const username = await signUp(page);
  const login = await request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } });
  const { access_token: token } = (await login.json()) as { access_token: string };
  const long = Array.from({ length: 200 }, (_, i) => `line ${i}`).join('\n');
  // One import instead of 1,000 requests: note i was written at minute i, so Note 999 is the newest.
  const at = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 60_000).toISOString();
  const notes = Array.from({ length: 1000 }, (_, i) => ({
    title: `Note ${String(i).padStart(3, '0')}`,
    created_at: at(i),
    updated_at: at(i),
    versions: [
      {
        version: 1,
        title: `Note ${String(i).padStart(3, '0')}`,
        content: `# Note ${String(i).padStart(3, '0')}\n\n**Line** one of ${i}.\n${long}`,
        created_at: at(i),
      },
    ],
  }));
  const imported = await request.post('/api/import', {
    headers: { authorization: `Bearer ${token}` },
    data: { format: 'vellum-export', format_version: 2, notes },
  });
  expect(imported.status()).toBe(201);
  await page.reload();
  const list = page.getByRole('list', { name: 'Notes, pinned first, then most recent' });
  const rows = list.locator(':scope > li');
  await expect(list.getByRole('link', { name: /^Note 999/ })).toBeVisible();
  // The row's preview is the text as plain words, without the heading that repeats the title.
  await expect(list.getByRole('link', { name: /^Note 999/ })).toContainText('Line one of 999. line 0 line 1');
  await expect(page.getByText('1,000 notes, 100 shown')).toBeVisible();
  // Virtualised: a screenful of rows and a few more are on the page, not a thousand.
  expect(await rows.count()).toBeLessThan(40);
  expect(await rows.first().getAttribute('aria-setsize')).toBe('1000');

  // Scrolling down loads the rest page by page; the oldest note is at the end.
  const box = page.locator('.rows-box');
  await expect
    .poll(
      async () => {
        await box.evaluate((el) => {
          el.scrollTop = el.scrollHeight;
        });
        return list.getByRole('link', { name: /^Note 000/ }).count();
      },
      { timeout: 30_000 },
    )
    .toBe(1);
  await expect(page.getByText('1,000 notes', { exact: true })).toBeVisible();
  expect(await rows.count()).toBeLessThan(40);
  await expect(list.getByRole('link', { name: /^Note 000/ }).locator('xpath=..')).toHaveAttribute(
    'aria-posinset',
    '1000',
  );

  // Every note was on the list at some point: scroll back up through it, collecting the titles.
  const seen = new Set<string>();
  // Half a box at a time from wherever the list is (it keeps what is on screen in place as rows
  // above are measured, so steps are taken from its own position).
  for (
    let top = await box.evaluate((el) => {
      el.scrollTop = el.scrollHeight;
      return el.scrollTop;
    });
    ;
  ) {
    await expect(list.locator('[aria-busy="true"]')).toHaveCount(0);
    // The list draws the rows for a new position on its next frame: read them once the rows on the
    // page cover the whole visible box (steps overlap, so no row is passed unseen).
    await expect
      .poll(
        () =>
          box.evaluate(async (el) => {
            // After the frame the list draws in.
            await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
            const view = el.getBoundingClientRect();
            // The rows are where the list is (the box may show space around it).
            const rows = el.querySelector('ul')!.getBoundingClientRect();
            const end = Math.min(view.bottom, rows.bottom);
            const spans = Array.from(el.querySelectorAll('[aria-posinset]'))
              .map((row) => row.getBoundingClientRect())
              .filter((r) => r.bottom > view.top && r.top < view.bottom)
              .sort((a, b) => a.top - b.top);
            let covered = Math.max(view.top, rows.top);
            for (const r of spans) if (r.top <= covered + 1) covered = Math.max(covered, r.bottom);
            return covered >= end - 1;
          }),
        { intervals: [50] },
      )
      .toBe(true);
    for (const title of await list.locator('.row-title').allInnerTexts()) seen.add(title.trim());
    if (top === 0) break;
    top = await box.evaluate((el) => {
      el.scrollTop -= el.clientHeight / 2;
      return el.scrollTop;
    });
  }
  expect(
    Array.from({ length: 1000 }, (_, i) => `Note ${String(i).padStart(3, '0')}`).filter((t) => !seen.has(t)),
  ).toEqual([]);

  // The oldest note, at the bottom of the list: the page itself never scrolls, the note shows at once.
  await box.evaluate((el) => {
    el.scrollTop = el.scrollHeight;
  });
  await list.getByRole('link', { name: /^Note 000/ }).click();
  await expect(page.getByLabel('Title')).toHaveValue('Note 000');
  expect(await page.evaluate(() => document.scrollingElement!.scrollTop)).toBe(0);
  await expect(page.getByRole('button', { name: 'Save' })).toBeInViewport();
  // At the end of the long note, Save is still there.
  await page.locator('.open').evaluate((pane) => {
    pane.scrollTop = pane.scrollHeight;
  });
  await expect(page.getByRole('button', { name: 'Save' })).toBeInViewport();
  // The open note's row stays on the page (and marked) when the list scrolls away from it.
  await box.evaluate((el) => {
    el.scrollTop = 0;
  });
  await expect(list.getByRole('link', { name: /^Note 000/ })).toHaveAttribute('aria-current', 'page');
});

test('a search hit in an earlier version opens that version in the history', async ({ page }) => {
  await signUp(page);
  const id = await createNote(page, 'Shopping', 'eggs and flour');
  await contentBox(page).fill('flour only');
  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 2')).toBeVisible();
  await page.getByLabel('Include earlier versions').check();
  await page.getByLabel('Search notes').fill('eggs');
  await page
    .getByRole('list', { name: 'Search results' })
    .getByRole('link', { name: /Shopping/ })
    .click();
  await expect(page).toHaveURL(new RegExp(`/notes/${id}/history\\?version=`));
  await expect(page.getByRole('button', { name: 'Version 1', exact: true })).toHaveAttribute('aria-current', 'true');
});

test('a version saved elsewhere shows up at once, or is offered over unsaved text, also when coming back to the tab; a lost connection is said plainly', async ({
  page,
  request,
}) => {
  const username = await signUp(page);
  const id = await createNote(page, 'Shared', 'mine');
  const { access_token: token } = (await (
    await request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } })
  ).json()) as { access_token: string };
  const saveElsewhere = async (content: string) => {
    const saved = await request.post(`/api/notes/${id}/versions`, {
      headers: { authorization: `Bearer ${token}` },
      data: { title: 'Shared', content },
    });
    expect(saved.status()).toBe(204);
  };
  // Nothing unsaved here: the live change is shown as it comes.
  await saveElsewhere('from elsewhere');
  await expectContent(page, 'from elsewhere');
  await expect(page.getByRole('status').filter({ hasText: `Version 2, saved by ${username}, is shown` })).toBeVisible();

  // Without the live stream (a proxy that cuts it), coming back to the tab still finds a newer version.
  await page.route('**/api/events', (route) => route.abort('connectionreset'));
  await page.reload();
  await expectContent(page, 'from elsewhere');
  await contentBox(page).fill('my unsaved text');
  await saveElsewhere('later, from elsewhere');
  await page.evaluate(() => window.dispatchEvent(new Event('focus')));
  await expect(
    page.getByRole('status').filter({ hasText: 'Version 3 of this note was saved elsewhere.' }),
  ).toBeVisible();
  await expectContent(page, 'my unsaved text');
  await page.unroute('**/api/events');

  await page.route('**/api/notes/search**', (route) => route.abort('internetdisconnected'));
  await page.getByLabel('Search notes').fill('anything');
  await expect(page.getByRole('alert')).toHaveText(
    'The server cannot be reached. Check your connection and try again; nothing was changed.',
  );
});

test("a long note's preview follows the typing once it pauses, keeping the last rendering meanwhile", async ({
  page,
}) => {
  await signUp(page);
  await createNote(page, 'Long', 'x');
  // A synthetic paste is CodeMirror's to take (the plain box it replaces ignores one): wait for it.
  await expectContent(page, 'x');
  const long = Array.from({ length: 400 }, (_, i) => `Paragraph ${i} with **bold** words to fill the note up.`).join(
    '\n\n',
  );
  await contentBox(page).evaluate((el, text) => {
    const data = new DataTransfer();
    data.setData('text/plain', text);
    el.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }));
  }, long);
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('region', { name: 'Preview' });
  await expect(preview).toContainText('Paragraph 399');
  await contentBox(page).press('Control+End');
  await page.keyboard.type(' and the end');
  await expect(preview).toContainText('Paragraph 399 with bold words to fill the note up. and the end');
  await expect(preview.getByText('Rendering…')).toHaveCount(0);
});

test('a screen whose data fails to load says so with Try again, never "Loading…" beside the error', async ({
  page,
}) => {
  await signUp(page);
  // The trash answers 503 once, as a busy server would.
  let failures = 1;
  await page.route('**/api/trash?*', async (route) => {
    if (failures-- <= 0) return route.fallback();
    await route.fulfill({
      status: 503,
      contentType: 'application/problem+json',
      body: JSON.stringify({
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        detail: 'The server is busy; try again in a moment',
      }),
    });
  });
  await page.getByRole('link', { name: 'Trash' }).click();
  await expect(page.getByRole('alert')).toContainText(
    'Could not load the trash: The server is busy; try again in a moment',
  );
  await expect(page.getByText('Loading…')).toHaveCount(0);
  await page.getByRole('button', { name: 'Try again' }).click();
  await expect(page.getByText('The trash is empty.')).toBeVisible();
  await expect(page.getByRole('alert')).toHaveCount(0);
});
