import type { Page } from '@playwright/test';
import { createNote, expect, expectAccessible, signUp, test } from './fixtures';

const folders = (page: Page) => page.getByRole('navigation', { name: 'Folders' });
const tags = (page: Page) => page.getByRole('navigation', { name: 'Tags' });
const notesList = (page: Page) => page.getByRole('list', { name: 'Notes, pinned first, then most recent' });
const rowTitles = (page: Page) => notesList(page).locator('.row-title');

async function newFolder(page: Page, name: string): Promise<void> {
  await page.getByRole('button', { name: 'New folder' }).click();
  await page.getByLabel('Folder name').fill(name);
  await page.getByRole('button', { name: 'Create folder' }).click();
  await expect(page.getByRole('heading', { level: 1, name })).toBeVisible();
}

test('build a tree, file notes (Move and drag), filter by folder and tag, pin, archive', async ({ page }) => {
  await page.setViewportSize({ width: 1280, height: 900 });
  await signUp(page);
  await expect(folders(page)).toBeVisible();
  await expect(tags(page)).toBeVisible();

  // A tree: Work, and Plans inside it (created while Work is the open folder).
  await newFolder(page, 'Work');
  await expect(page.getByRole('heading', { level: 1, name: 'Work' })).toBeVisible();
  await newFolder(page, 'Plans');
  await expect(
    folders(page)
      .locator('.tree .tree')
      .getByRole('link', { name: /^Plans/ }),
  ).toBeVisible();
  // A duplicate name is refused in plain words by the field (links-tasks-quotes.spec.ts has the rest).
  await folders(page).getByRole('link', { name: /^Work/ }).click();
  await page.getByRole('button', { name: 'New folder' }).click();
  await page.getByLabel('Folder name').fill('plans');
  await page.getByRole('button', { name: 'Create folder' }).click();
  await expect(page.getByRole('alert')).toHaveText(
    'There is already a folder called “plans” here. Choose another name.',
  );
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expectAccessible(page, 'folder view');

  // Notes: one created inside Work, one at the top level moved with Move, one dragged onto Plans.
  await createNote(page, 'Inside work', 'meeting notes #project/vellum');
  await folders(page).getByRole('link', { name: 'All notes' }).click();
  await createNote(page, 'Groceries', 'milk #errands');
  await page.getByLabel('Folder', { exact: true }).selectOption({ label: 'Work' });
  await page.getByRole('button', { name: 'Move', exact: true }).click();
  await expect(page.getByRole('status').filter({ hasText: 'Moved to “Work”.' })).toBeVisible();
  await createNote(page, 'Dragged', 'to plans');
  await notesList(page)
    .getByRole('link', { name: /Dragged/ })
    .dragTo(folders(page).getByRole('link', { name: /^Plans/ }));
  await expect(page.getByText('Moved to “Plans”.')).toBeVisible();

  await folders(page).getByRole('link', { name: /^Work/ }).click();
  await expect(rowTitles(page)).toHaveText(['Groceries', 'Inside work']);
  await expect(folders(page).getByRole('link', { name: /^Work/ })).toHaveAccessibleName('Work 2 notes');
  await folders(page)
    .getByRole('link', { name: /^Plans/ })
    .click();
  await expect(rowTitles(page)).toHaveText(['Dragged']);

  // Tags: counted in the sidebar, shown on rows, each a filter.
  await folders(page).getByRole('link', { name: 'All notes' }).click();
  await expect(tags(page).getByRole('link')).toHaveText([
    '#errands 1 notes',
    '#project 1 notes',
    '#project/vellum 1 notes',
  ]);
  await tags(page)
    .getByRole('link', { name: /^#project 1/ })
    .click();
  await expect(page.getByRole('heading', { level: 1, name: '#project' })).toBeVisible();
  await expect(rowTitles(page)).toHaveText(['Inside work']);
  await notesList(page).getByRole('link', { name: '#project/vellum', exact: true }).click();
  await expect(page.getByRole('heading', { level: 1, name: '#project/vellum' })).toBeVisible();
  await expectAccessible(page, 'tag view');

  // Pin: the pinned note leads the list. Archive: it leaves the list for the archive, and comes back.
  await folders(page).getByRole('link', { name: 'All notes' }).click();
  await expect(rowTitles(page)).toHaveText(['Dragged', 'Groceries', 'Inside work']);
  await notesList(page)
    .getByRole('link', { name: /Inside work/ })
    .click();
  await page.getByRole('button', { name: 'Pin', exact: true }).click();
  await expect(page.getByRole('button', { name: 'Unpin' })).toBeVisible();
  await expect(rowTitles(page)).toHaveText(['Pinned: Inside work', 'Dragged', 'Groceries']);
  await notesList(page)
    .getByRole('link', { name: /Groceries/ })
    .click();
  await page.getByRole('button', { name: 'Archive', exact: true }).click();
  await expect(page.getByRole('button', { name: 'Unarchive' })).toBeVisible();
  await expect(rowTitles(page)).toHaveText(['Pinned: Inside work', 'Dragged']);
  await folders(page).getByRole('link', { name: 'Archive' }).click();
  await expect(rowTitles(page)).toHaveText(['Groceries']);
  await expectAccessible(page, 'archive view');
  await page.getByRole('button', { name: 'Unarchive' }).click();
  await expect(page.getByText('No notes here.')).toBeVisible();
  // The view is in the address: a reload keeps it.
  await page.reload();
  await expect(page.getByRole('heading', { level: 1, name: 'Archive' })).toBeVisible();

  // Deleting a folder sends its notes to the trash (after a confirmation).
  await folders(page).getByRole('link', { name: /^Work/ }).click();
  page.once('dialog', (dialog) => void dialog.accept());
  await page.getByRole('button', { name: 'Delete folder' }).click();
  await expect(folders(page).getByRole('link', { name: /^Work/ })).toHaveCount(0);
  await expect(page.getByText('No notes yet.')).toBeVisible();
});

test('at 375 px the folders and tags are a drawer, reachable by keyboard, and filter the list', async ({ browser }) => {
  const context = await browser.newContext({ viewport: { width: 375, height: 740 } });
  const page = await context.newPage();
  await signUp(page);
  await createNote(page, 'Phone note', 'on the go #mobile');
  await page.getByRole('link', { name: '← Notes' }).click();
  const toggle = page.getByRole('button', { name: 'Folders and tags' });
  await expect(folders(page)).toBeHidden();
  await toggle.focus();
  await page.keyboard.press('Enter');
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  await expect(folders(page)).toBeVisible();
  await expectAccessible(page, 'drawer at 375 px');
  await newFolder(page, 'Trips');
  await expect(page.getByRole('heading', { level: 1, name: 'Trips' })).toBeVisible();
  await toggle.click();
  await tags(page)
    .getByRole('link', { name: /^#mobile/ })
    .focus();
  await page.keyboard.press('Enter');
  await expect(folders(page)).toBeHidden();
  await expect(page.getByRole('heading', { level: 1, name: '#mobile' })).toBeVisible();
  await expect(rowTitles(page)).toHaveText(['Phone note']);
  await notesList(page)
    .getByRole('link', { name: /Phone note/ })
    .click();
  // On a phone the filing bar waits in the toolbar's More menu.
  await page.getByRole('button', { name: 'More' }).click();
  await page.getByLabel('Folder', { exact: true }).selectOption({ label: 'Trips' });
  await page.getByRole('button', { name: 'Move', exact: true }).click();
  await expect(page.getByText('Moved to “Trips”.')).toBeVisible();
  await page.getByRole('button', { name: 'Pin', exact: true }).click();
  await expect(page.getByRole('button', { name: 'Unpin' })).toBeVisible();
  await expectAccessible(page, 'note at 375 px');
  await context.close();
});
