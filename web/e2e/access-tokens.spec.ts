import { expect, expectAccessible, GOOD_PASSWORD, signUp, test } from './fixtures';

test('a new access token is shown once, works for the API within its scope, and revoking it ends it', async ({
  page,
}) => {
  await signUp(page);
  await page.getByRole('link', { name: 'Account' }).click();
  const section = page.getByRole('region', { name: 'Access tokens' });
  await expect(section).toContainText('No tokens.');
  await section.getByRole('button', { name: 'New token' }).click();
  await section.getByLabel('Token name').fill('Backup script');
  await section.getByLabel('Current password').fill(GOOD_PASSWORD);
  await expectAccessible(page, 'new token form');
  await section.getByRole('button', { name: 'Create token' }).click();
  const shown = section.locator('code.secret');
  await expect(shown).toHaveText(/^vlm_[0-9A-Za-z]{38}$/);
  const token = (await shown.textContent())!;
  const row = section.getByRole('listitem', { name: 'Backup script' });
  await expect(row).toContainText('notes:read');
  await expect(row).toContainText('never used');

  // The token reads notes over plain HTTP, without the browser's session.
  const read = await page.request.get('/api/notes', { headers: { authorization: `Bearer ${token}` } });
  expect(read.status()).toBe(200);
  expect(
    (
      await page.request.post('/api/notes', { headers: { authorization: `Bearer ${token}` }, data: { title: 'x' } })
    ).status(),
  ).toBe(401);

  await section.getByRole('button', { name: 'Done' }).click();
  await expect(shown).toHaveCount(0);
  await page.reload();
  await expect(row).toContainText('last used');
  page.once('dialog', (dialog) => void dialog.accept());
  await section.getByRole('button', { name: 'Revoke Backup script' }).click();
  await expect(section.getByRole('status')).toHaveText('“Backup script” revoked.');
  expect((await page.request.get('/api/notes', { headers: { authorization: `Bearer ${token}` } })).status()).toBe(401);
});
