import { createNote, expect, expectAccessible, openHistory, saveContent, signUp, test } from './fixtures';

// Issue #42, item 7: the history in editing sessions with a one-line summary of what changed; a
// search hit in an earlier version opens it with the match marked.

for (const width of [375, 1280]) {
  test(`history at ${width} px: versions saved in one sitting are one session, summed up in a line; a search hit is marked`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    const id = await createNote(page, 'Plan', 'one\ntwo');
    await saveContent(page, 'one\ntwo\nthree', 2);
    await saveContent(page, 'one\nthree\nfour\nfive', 3);

    // On a phone History waits in the toolbar's More menu (phone.spec.ts).
    if (width < 720) await page.getByRole('button', { name: 'More' }).click();
    const versions = await openHistory(page, id);
    await expect(versions).toHaveText(['Version 3', 'Version 2', 'Version 1']);
    const sessions = page.getByRole('navigation', { name: 'Versions, newest first' }).getByRole('group');
    await expect(sessions).toHaveCount(1);
    // From the empty note to version 3: five lines written, one of them ("two") taken out again.
    await expect(sessions.first()).toContainText('+5 lines, −1');
    await expect(sessions.first()).toContainText('3 versions');
    await expect(sessions.first().getByRole('button')).toHaveText(['Version 3', 'Version 2', 'Version 1']);
    await expectAccessible(page, `history in sessions at ${width} px`);

    // A word only an earlier version has: its hit opens that version, the word marked.
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Notes' }).click();
    await page.getByLabel('Include earlier versions').check();
    await page.getByLabel('Search notes').fill('two');
    await page.getByRole('list', { name: 'Search results' }).getByRole('link', { name: /Plan/ }).click();
    await expect(page).toHaveURL(new RegExp(`/notes/${id}/history\\?version=`));
    const shown = page.getByRole('region', { name: /^Version \d rendered$/ });
    await expect(shown.locator('mark.search-hit')).toHaveText(['two']);
    await expect(shown.locator('mark.search-hit')).toBeInViewport();
    await expectAccessible(page, `search hit in an earlier version at ${width} px`);
  });
}
