import fs from 'node:fs';
import type { Page } from '@playwright/test';
import { strToU8, zipSync } from 'fflate';
import { createNote, expect, expectAccessible, saveContent, signUp, test } from './fixtures';

// Issue #42, item 8, in the browser at 375 px and 1280 px (the server's side: markdown-import.test.ts):
// the Markdown export imported back with "Skip" leaves out a note of several versions instead of
// copying it, keeps it pinned, and an Obsidian-like vault brings its front matter tags: and
// [[wikilinks]] along.

async function openImport(page: Page, phone: boolean) {
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Account' }).click();
  const section = page.getByRole('region', { name: 'Export and import' });
  // On a phone the Account page's sections are folded under their headings (phone.spec.ts).
  if (phone) await section.getByRole('button', { name: 'Export and import' }).click();
  return section;
}

for (const width of [375, 1280]) {
  const phone = width < 720;
  test(`at ${width} px: the Markdown export of a note of three versions, pinned, is skipped when imported back; a vault's tags and [[links]] come along`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    await createNote(page, 'Three versions', 'one');
    await saveContent(page, 'two', 2);
    await saveContent(page, 'three', 3);
    if (phone) await page.getByRole('button', { name: 'More' }).click();
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await expect(page.getByRole('button', { name: 'Unpin' })).toBeVisible();

    const section = await openImport(page, phone);
    const downloading = page.waitForEvent('download');
    await section.getByRole('button', { name: 'Export Markdown' }).click();
    const exported = fs.readFileSync((await (await downloading).path())!);
    const input = section.getByLabel('Import a Vellum export (JSON, archive or Markdown zip) or a Markdown file');
    await input.setInputFiles({ name: 'vellum-notes.zip', mimeType: 'application/zip', buffer: exported });
    await section.getByRole('button', { name: 'Import', exact: true }).click();
    // The note of three versions is found here (it was copied before the fix), and left out.
    const asked = section.getByRole('group', { name: /1 note in this file is already here/ });
    await expect(asked).toBeVisible();
    await asked.getByRole('button', { name: 'Skip it' }).click();
    await expect(
      section.getByText('Imported 0 notes with 0 versions. 1 note was already here and left out.'),
    ).toBeVisible();

    // A vault of another tool: front matter tags and a [[link]] to the note above.
    const vault = zipSync({
      'Vault/Trip.md': strToU8('---\ntags: [travel, "plans/2027"]\n---\nSee [[Three versions]] before going.\n'),
    });
    await input.setInputFiles({ name: 'vault.zip', mimeType: 'application/zip', buffer: Buffer.from(vault) });
    await section.getByRole('button', { name: 'Import', exact: true }).click();
    await expect(section.getByText('Imported 1 note with 1 version.')).toBeVisible();
    await expectAccessible(page, `imports at ${width} px`);

    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
    const rows = page.getByRole('list', { name: 'Notes, pinned first, then most recent' }).locator('.row-title');
    // Still one copy of the note, still pinned.
    await expect(rows).toHaveText(['Pinned: Three versions', 'Trip']);
    if (phone) await page.getByRole('button', { name: 'Folders and tags' }).click();
    const tags = page.getByRole('navigation', { name: 'Tags' });
    await expect(tags.getByRole('link', { name: /travel/ })).toBeVisible();
    await expect(tags.getByRole('link', { name: /plans\/2027/ })).toBeVisible();
    if (phone) await page.getByRole('button', { name: 'Folders and tags' }).click();

    await page.getByRole('link', { name: /^Trip/ }).click();
    await page
      .getByRole('form', { name: 'Note' })
      .locator('.toolbar')
      .getByRole('button', { name: 'Edit', exact: true })
      .click();
    await page.locator('article.reading').getByRole('link', { name: 'Three versions' }).click();
    await expect(page.getByLabel('Title')).toHaveValue('Three versions');
  });
}
