import type { Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, signUp, test } from './fixtures';

// Issue #42, item 10 (part): the login page says what Vellum is; Undo after Delete; "Moved to …"
// goes away by itself.

async function newFolder(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: 'New folder' }).click();
  await page.getByLabel('Folder name').fill(name);
  await page.getByRole('button', { name: 'Create folder' }).click();
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

for (const width of [375, 1280]) {
  test(`at ${width} px: the login page says what Vellum is; Delete offers Undo, which brings the note back`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await page.goto('/');
    await expect(page.getByText(/Vellum is a private notebook/)).toBeVisible();
    await expectAccessible(page, `login at ${width} px`);

    await signUp(page);
    const id = await createNote(page, 'Keep me', 'precious');
    if (width < 720) await page.getByRole('button', { name: 'More' }).click();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    const flash = page.getByRole('status').filter({ hasText: '“Keep me” moved to the trash.' });
    await expect(flash).toBeVisible();
    await expectAccessible(page, `Undo after Delete at ${width} px`);
    await flash.getByRole('button', { name: 'Undo' }).click();
    // The note opens again (on a phone the list, with its message, gives way to it).
    if (width >= 720) await expect(page.getByRole('status').filter({ hasText: '“Keep me” is back.' })).toBeVisible();
    await expect(page).toHaveURL(new RegExp(`/notes/${id}$`));
    await expect(page.getByLabel('Title')).toHaveValue('Keep me');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
    await expect(page.getByText('The trash is empty.')).toBeVisible();
  });
}

for (const [width, scheme] of [
  [375, 'dark'],
  [1280, 'light'],
] as const) {
  test(`at ${width} px, ${scheme}: an account with no notes is told what Vellum is and how to begin`, async ({
    browser,
  }) => {
    const context = await browser.newContext({ viewport: { width, height: 800 }, colorScheme: scheme });
    const page = await context.newPage();
    // The specs' service makes no welcome note (fixtures.ts): the list is empty, as after deleting it.
    await signUp(page);
    await expect(page.getByText('No notes yet.')).toBeVisible();
    await expect(page.getByText(/Vellum keeps your notes in Markdown on your own server/)).toBeVisible();
    await expect(page.getByText(/Press New note to write your first one/)).toBeInViewport();
    await expectAccessible(page, `no notes yet at ${width} px, ${scheme}`);
    // Its link goes to Account, where imports are.
    await page.getByRole('link', { name: 'import what you have' }).click();
    await expect(page.getByRole('heading', { name: 'Account', exact: true })).toBeVisible();
    await context.close();
  });
}

for (const width of [375, 1280]) {
  test(`at ${width} px: "Moved to …" goes away by itself`, async ({ page }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    if (width < 720) await page.getByRole('button', { name: 'Folders and tags' }).click();
    await newFolder(page, 'Work');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
    await createNote(page, 'Report', 'text');
    // On a phone the filing bar waits in the toolbar's More menu (phone.spec.ts).
    if (width < 720) await page.getByRole('button', { name: 'More' }).click();
    await page.getByLabel('Folder', { exact: true }).selectOption({ label: 'Work' });
    await page.getByRole('button', { name: 'Move', exact: true }).click();
    const moved = page.getByText('Moved to “Work”.');
    await expect(moved).toBeVisible();
    await expect(moved).toBeHidden();
  });
}

for (const width of [375, 1280]) {
  test(`at ${width} px: Ctrl+K, even from inside the text, finds a note as you type and Enter opens it`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    const garden = await createNote(page, 'Garden plan', 'tomatoes and basil');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
    await createNote(page, 'Tax return', 'receipts');
    await contentBox(page).click();
    await page.keyboard.press('Control+k');
    const switcher = page.getByRole('dialog', { name: 'Go to a note' });
    await expect(switcher).toBeVisible();
    await expect(switcher.getByRole('searchbox', { name: 'Note to open' })).toBeFocused();
    await expect(switcher.getByRole('list', { name: 'Recent notes' }).getByRole('link')).toHaveCount(2);
    await page.keyboard.type('basil');
    await expect(switcher.getByRole('list', { name: 'Matching notes' }).getByRole('link')).toHaveText(['Garden plan']);
    await expectAccessible(page, `quick switcher at ${width} px`);
    await page.keyboard.press('Enter');
    await expect(switcher).toBeHidden();
    await expect(page).toHaveURL(new RegExp(`/notes/${garden}$`));
    await expect(page.getByLabel('Title')).toHaveValue('Garden plan');
  });
}

for (const width of [375, 1280]) {
  test(`at ${width} px: Empty trash deletes every note in it for good, after asking`, async ({ page }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    for (const title of ['Old one', 'Old two']) {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
      await createNote(page, title, 'gone');
      if (width < 720) await page.getByRole('button', { name: 'More' }).click();
      await page.getByRole('button', { name: 'Delete', exact: true }).click();
      await expect(page.getByRole('status').filter({ hasText: `“${title}” moved to the trash.` })).toBeVisible();
    }
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Trash' }).click();
    await expect(page.getByRole('listitem')).toHaveCount(2);
    await expectAccessible(page, `trash with Empty trash at ${width} px`);
    const asked = page.waitForEvent('dialog');
    const clicked = page.getByRole('button', { name: 'Empty trash' }).click();
    const confirm = await asked;
    expect(confirm.message()).toBe('Delete all 2 notes in the trash, and their versions, for good?');
    await confirm.accept();
    await clicked;
    await expect(page.getByText('The trash is emptied: 2 notes deleted for good.')).toBeVisible();
    await expect(page.getByText('The trash is empty.')).toBeVisible();
  });
}
