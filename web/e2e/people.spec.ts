import type { Browser, BrowserContext, Page } from '@playwright/test';
import { contentBox, createNote, expect, expectAccessible, expectContent, openHistory, signUp, test } from './fixtures';

// Two people, two browser contexts; closed after each test, passed or failed, so their pages (live
// streams, editors) do not run on beside the tests that follow.
const contexts: BrowserContext[] = [];
async function person(browser: Browser): Promise<Page> {
  const context = await browser.newContext();
  contexts.push(context);
  return context.newPage();
}
test.afterEach(async () => {
  for (const context of contexts.splice(0)) await context.close();
});

test("share a note with a second person as editor: both edit, and each sees the other's save appear without a reload", async ({
  browser,
}) => {
  const alice = await person(browser);
  const bob = await person(browser);
  const bobName = await signUp(bob);
  const aliceName = await signUp(alice);
  const id = await createNote(alice, 'Plan', 'first\n');

  await alice.getByRole('button', { name: 'Share' }).click();
  const people = alice.getByRole('region', { name: 'People' });
  await people.getByLabel('Username').fill(bobName);
  await people.getByRole('button', { name: 'Add person' }).click();
  await expect(people.getByRole('status')).toHaveText(`Shared with ${bobName}: they can read and edit it.`);
  await expect(people.getByRole('listitem', { name: bobName })).toBeVisible();
  await expectAccessible(alice, 'share panel with people');

  await bob.getByRole('link', { name: 'Shared with me' }).click();
  const row = bob.getByRole('link', { name: /Plan/ });
  await expect(row).toContainText(`${aliceName} · can edit`);
  await row.click();
  await expect(bob.getByText('Shared with you: you can read and edit this note.')).toBeVisible();
  await expectContent(bob, 'first\n');
  await expect(bob.getByRole('button', { name: 'Delete' })).toHaveCount(0);

  // Bob saves; Alice, with nothing unsaved, sees it at once.
  await contentBox(bob).fill('first\nsecond, from Bob\n');
  await bob.getByRole('button', { name: 'Save' }).click();
  await expect(bob.getByRole('status').filter({ hasText: 'Saved as version 2' })).toBeVisible();
  await expectContent(alice, 'first\nsecond, from Bob\n');
  await expect(alice.getByRole('status').filter({ hasText: `Version 2, saved by ${bobName}, is shown` })).toBeVisible();

  // Alice saves; Bob sees hers the same way.
  await contentBox(alice).fill('first\nsecond, from Bob\nthird, from Alice\n');
  await alice.getByRole('button', { name: 'Save' }).click();
  await expectContent(bob, 'first\nsecond, from Bob\nthird, from Alice\n');

  // With unsaved text, a save elsewhere is offered, not loaded over it.
  await contentBox(alice).fill('Alice is still typing');
  await contentBox(bob).fill('Bob rewrote it\n');
  await bob.getByRole('button', { name: 'Save' }).click();
  await expect(alice.getByText(`Version 4 of this note was saved by ${bobName}.`)).toBeVisible();
  await expectContent(alice, 'Alice is still typing');

  const versions = await openHistory(bob, id);
  await expect(versions).toHaveText(['Version 4', 'Version 3', 'Version 2', 'Version 1']);
  await expect(bob.locator('.meta').first()).toContainText(bobName);
});

test('a viewer reads the note rendered, without Save, and loses it when removed', async ({ browser }) => {
  const owner = await person(browser);
  const viewer = await person(browser);
  const viewerName = await signUp(viewer);
  await signUp(owner);
  const id = await createNote(owner, 'Menu', '# Soup\n\nTomato');
  await owner.getByRole('button', { name: 'Share' }).click();
  const people = owner.getByRole('region', { name: 'People' });
  await people.getByLabel('Username').fill(viewerName);
  await people.getByLabel('Role', { exact: true }).selectOption('viewer');
  await people.getByRole('button', { name: 'Add person' }).click();
  await expect(people.getByRole('status')).toHaveText(`Shared with ${viewerName}: they can read it.`);

  await viewer.goto(`/notes/${id}`);
  await expect(viewer.getByText('Shared with you: you can read this note.')).toBeVisible();
  await expect(viewer.getByRole('heading', { name: 'Soup' })).toBeVisible();
  await expect(viewer.getByRole('button', { name: 'Save' })).toHaveCount(0);
  await expectAccessible(viewer, 'a note shared to read');

  await people.getByRole('button', { name: `Remove ${viewerName}` }).click();
  await expect(people.getByRole('status')).toHaveText(`${viewerName} no longer has this note.`);
  await viewer.reload();
  await expect(viewer.getByRole('alert')).toContainText('Note not found');
});
