import {
  createNote,
  expect,
  expectAccessible,
  expectContent,
  openHistory,
  saveContent,
  signUp,
  test,
} from './fixtures';

test('history: diff with word highlights, a name, compare, restore', async ({ page }) => {
  await signUp(page);
  const id = await createNote(page, 'Fox', 'The quick brown fox\nsecond line');
  await saveContent(page, 'The quick red fox\nsecond line', 2);

  const versions = await openHistory(page, id);
  await expect(versions).toHaveText(['Version 2', 'Version 1']);

  // A version opens with what it changed; inside a changed line only the changed words are marked.
  await page.getByRole('button', { name: 'Version 2' }).click();
  const diff = page.getByRole('region', { name: 'Changes from version 1 to 2' });
  await expect(diff).toContainText('Changes from version 1 to 2: +1 −1 lines');
  await expect(diff.locator('tr.del')).toHaveText(['-The quick brown fox']);
  await expect(diff.locator('tr.del mark')).toHaveText(['brown']);
  await expect(diff.locator('tr.add')).toHaveText(['+The quick red fox']);
  await expect(diff.locator('tr.add mark')).toHaveText(['red']);
  await expectAccessible(page, 'history with diff');

  // Name a version; the list shows the name.
  await page.getByRole('button', { name: 'Version 1' }).click();
  await expect(page.getByRole('heading', { name: 'Version 1: Fox' })).toBeVisible();
  await page.getByLabel('Version name').fill('First draft');
  await page.getByRole('button', { name: 'Name version' }).click();
  await expect(page.getByText('Version 1 is named “First draft”.')).toBeVisible();
  await expect(
    page.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'Version 1' }) }),
  ).toContainText('First draft');

  // Compare any version with the current one.
  await page.getByRole('button', { name: 'Compare with current' }).click();
  await expect(page.getByRole('region', { name: 'Changes from version 1 to 2' })).toBeVisible();

  // Restore makes the old text the newest version; nothing is removed from the history.
  await page.getByRole('button', { name: 'Restore' }).click();
  await expect(page.getByText('Version 1 restored as version 3.')).toBeVisible();
  await expect(versions).toHaveText(['Version 3', 'Version 2', 'Version 1']);
  await expect(
    page.getByRole('listitem').filter({ has: page.getByRole('button', { name: 'Version 3' }) }),
  ).toContainText('restored from 1');
  await page.getByRole('button', { name: 'Back to note' }).click();
  await expectContent(page, 'The quick brown fox\nsecond line');
  await expect(page.getByText('Version 3', { exact: true })).toBeVisible();
});

// Issue 39: a line added after a last line without a line break showed that last line as removed
// and added again (only its ending changed): it shows once, unchanged.
test('a line added at the end of a note: the line before it shows unchanged, not removed and added', async ({
  page,
}) => {
  await signUp(page);
  const id = await createNote(page, 'Ends', 'line one\nline two');
  await saveContent(page, 'line one\nline two\nline three', 2);
  await openHistory(page, id);
  await page.getByRole('button', { name: 'Version 2' }).click();
  const diff = page.getByRole('region', { name: 'Changes from version 1 to 2' });
  await expect(diff.locator('tr.add')).toHaveText(['+line three']);
  await expect(diff.locator('tr.del')).toHaveCount(0);
  await expect(diff.locator('tr.same')).toContainText(['line two']);
});
