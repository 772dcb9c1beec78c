import fs from 'node:fs';
import { createNote, expect, expectAccessible, expectContent, signUp, test } from './fixtures';

test('the Markdown export imports back, and so does a single .md file', async ({ page }) => {
  await signUp(page);
  await createNote(page, 'Lighthouse', 'Visit the **lighthouse**');
  await page.getByRole('link', { name: 'Account' }).click();
  const downloading = page.waitForEvent('download');
  await page.getByRole('button', { name: 'Export Markdown' }).click();
  const zip = fs.readFileSync((await (await downloading).path())!);

  const input = page.getByLabel('Import a Vellum export (JSON, archive or Markdown zip) or a Markdown file');
  await input.setInputFiles({ name: 'vellum-notes.zip', mimeType: 'application/zip', buffer: zip });
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  // The zip holds this account's own note: the page asks before importing it again.
  const asked = page.getByRole('group', { name: /1 note in this file is already here/ });
  await expect(asked).toBeVisible();
  await expectAccessible(page, 'account asking about notes already here');
  await asked.getByRole('button', { name: 'Skip it' }).click();
  await expect(page.getByText('Imported 0 notes with 0 versions. 1 note was already here and left out.')).toBeVisible();
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await page
    .getByRole('group', { name: /already here/ })
    .getByRole('button', { name: 'Import copies' })
    .click();
  await expect(page.getByText('Imported 1 note with 1 version.')).toBeVisible();
  await expect(page.getByRole('group', { name: /already here/ })).toHaveCount(0);

  await input.setInputFiles({
    name: 'trip.md',
    mimeType: 'text/markdown',
    buffer: Buffer.from('---\ntitle: "Trip to Lyon"\ncreated_at: 2024-03-01T10:00:00.000Z\n---\n\nPack the tent.\n'),
  });
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(page.getByText('Imported 1 note with 1 version.')).toBeVisible();
  await expectAccessible(page, 'account after imports');

  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByRole('link', { name: /Lighthouse/ })).toHaveCount(2);
  await page.getByRole('link', { name: /Trip to Lyon/ }).click();
  await expect(page.getByLabel('Title')).toHaveValue('Trip to Lyon');
  await expectContent(page, 'Pack the tent.\n');
});
