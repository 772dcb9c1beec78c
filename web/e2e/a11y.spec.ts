import { ADMIN, createNote, expect, expectAccessible, GOOD_PASSWORD, logIn, test, uniqueName } from './fixtures';

// Every screen through axe-core, on a phone and a desktop, in the light and the dark scheme: the
// other specs check the screens they drive; this one walks all of them in all four ways.
for (const scheme of ['light', 'dark'] as const) {
  for (const [device, viewport] of [
    ['375 px', { width: 375, height: 740 }],
    ['desktop', { width: 1280, height: 800 }],
  ] as const) {
    test(`every screen is axe-clean: ${device}, ${scheme}`, async ({ browser }) => {
      const context = await browser.newContext({ colorScheme: scheme, viewport });
      const page = await context.newPage();
      const username = uniqueName('a11y');
      await page.goto('/signup');
      await expectAccessible(page, 'sign up');
      await page.getByLabel('Username').fill(username);
      await page.getByLabel('Password', { exact: true }).fill(GOOD_PASSWORD);
      await page.getByRole('button', { name: 'Sign up' }).click();
      await expect(page.getByRole('button', { name: 'New note' })).toBeVisible();
      await expectAccessible(page, 'empty notes list');

      const id = await createNote(
        page,
        'Checklist',
        '# Plan\n\n- [x] done\n- [ ] next #work\n\n> quoted\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```js\nconst x = 1;\n```',
      );
      await expectAccessible(page, 'a note in the editor');
      await page.getByRole('button', { name: 'Edit' }).click();
      await expect(page.getByRole('region', { name: 'Note' }).getByRole('heading', { name: 'Plan' })).toBeVisible();
      await expectAccessible(page, 'the reading view');
      await page.goto(`/notes/${id}/history`);
      await expect(page.getByRole('button', { name: 'Version 1', exact: true })).toBeVisible();
      await expectAccessible(page, 'history');
      await page.goto('/');
      await expect(page.getByRole('link', { name: /Checklist/ })).toBeVisible();
      await expectAccessible(page, 'notes list with a preview and a tag');
      await page.getByRole('link', { name: 'Trash' }).click();
      await expect(page.getByText('The trash is empty.')).toBeVisible();
      await expectAccessible(page, 'trash');
      await page.getByRole('link', { name: 'Account' }).click();
      // On a phone the Account page's sections start folded (phone.spec.ts).
      const sessions = page.getByRole('button', { name: 'Sessions' });
      if ((await sessions.getAttribute('aria-expanded')) === 'false') await sessions.click();
      await expect(page.getByText('This device', { exact: true })).toBeVisible();
      await expectAccessible(page, 'account');
      await page.keyboard.press('?');
      await expect(page.getByRole('dialog')).toBeVisible();
      await expectAccessible(page, 'keyboard shortcuts');
      await page.keyboard.press('Escape');

      await page.getByRole('button', { name: 'Log out', exact: true }).click();
      await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
      await expectAccessible(page, 'log in');
      await logIn(page, ADMIN.username, ADMIN.password);
      await page.getByRole('link', { name: 'Admin' }).click();
      await expect(page.getByRole('listitem', { name: username })).toBeVisible();
      await expectAccessible(page, 'administration');
      await context.close();
    });
  }
}

// The check itself can fail: a page of the app with an unlabelled field and an image without a text
// alternative, in the dark scheme, as the screens above are checked.
test('the accessibility check finds what it looks for', async ({ page }) => {
  await page.emulateMedia({ colorScheme: 'dark' });
  await page.goto('/login');
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
  await page.evaluate(() => {
    const field = document.createElement('input');
    const image = document.createElement('img');
    image.src = 'data:image/gif;base64,R0lGODlhAQABAAAAACw=';
    document.querySelector('main')!.append(field, image);
  });
  const failure = await expectAccessible(page, 'broken login').then(
    () => undefined,
    (error: Error) => error.message,
  );
  expect(failure).toContain('label (critical)');
  expect(failure).toContain('image-alt (critical)');
});
