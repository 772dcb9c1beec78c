import fs from 'node:fs';
import { expect, test } from '@playwright/test';
import { createNote, expectAccessible, expectContent, signUp } from './fixtures';

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
  await expect(page.getByText('Imported 1 notes with 1 versions.')).toBeVisible();

  await input.setInputFiles({
    name: 'trip.md', mimeType: 'text/markdown',
    buffer: Buffer.from('---\ntitle: "Trip to Lyon"\ncreated_at: 2024-03-01T10:00:00.000Z\n---\n\nPack the tent.\n'),
  });
  await page.getByRole('button', { name: 'Import', exact: true }).click();
  await expect(page.getByText('Imported 1 notes with 1 versions.')).toBeVisible();
  await expectAccessible(page, 'account after imports');

  await page.getByRole('link', { name: 'Notes' }).click();
  await expect(page.getByRole('link', { name: /Lighthouse/ })).toHaveCount(2);
  await page.getByRole('link', { name: /Trip to Lyon/ }).click();
  await expect(page.getByLabel('Title')).toHaveValue('Trip to Lyon');
  await expectContent(page, 'Pack the tent.\n');
});
