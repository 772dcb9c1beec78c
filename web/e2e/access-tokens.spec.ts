import { expect, expectAccessible, GOOD_PASSWORD, signUp, test } from './fixtures';

for (const width of [375, 1280]) {
  test(`at ${width} px: a new access token is shown once, works for the API within its scope (403 naming the scope outside it), and revoking it ends it`, async ({
    page,
  }) => {
    await page.setViewportSize({ width, height: 800 });
    await signUp(page);
    await page.getByRole('link', { name: 'Account' }).click();
    const section = page.getByRole('region', { name: 'Access tokens' });
    // On a phone the Account page's sections are folded under their headings (phone.spec.ts).
    if (width < 720) await section.getByRole('button', { name: 'Access tokens' }).click();
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
    // A write with this read-only token is refused as such (issue #42, item 10): 403 naming the scope
    // it needs, not the 401 of a failed sign-in that sends a script to look for a wrong token.
    const write = await page.request.post('/api/notes', {
      headers: { authorization: `Bearer ${token}` },
      data: { title: 'x' },
    });
    expect(write.status()).toBe(403);
    expect(await write.json()).toMatchObject({ code: 'insufficient_scope', required_scope: 'notes:write' });
    expect(write.headers()['www-authenticate']).toBe('Bearer error="insufficient_scope", scope="notes:write"');

    await section.getByRole('button', { name: 'Done' }).click();
    await expect(shown).toHaveCount(0);
    await page.reload();
    if (width < 720) await section.getByRole('button', { name: 'Access tokens' }).click();
    await expect(row).toContainText('last used');
    page.once('dialog', (dialog) => void dialog.accept());
    await section.getByRole('button', { name: 'Revoke Backup script' }).click();
    await expect(section.getByRole('status')).toHaveText('“Backup script” revoked.');
    expect((await page.request.get('/api/notes', { headers: { authorization: `Bearer ${token}` } })).status()).toBe(
      401,
    );
  });
}
