import {
  createNote,
  expect,
  expectAccessible,
  expectContent,
  GOOD_PASSWORD,
  openHistory,
  signUp,
  test,
} from './fixtures';

test("a WebDAV token from the account screen: a note written here is a file there, and a file saved there is the note's next version here", async ({
  page,
}) => {
  const username = await signUp(page);
  const id = await createNote(page, 'Reading list', 'Dune\n');

  await page.getByRole('link', { name: 'Account' }).click();
  const section = page.getByRole('region', { name: 'Access tokens' });
  const address = `${new URL(page.url()).origin}/dav/`;
  await expect(section.locator('#webdav-address')).toContainText(`WebDAV at ${address} with your username`);
  await section.getByRole('button', { name: 'New token' }).click();
  await section.getByLabel('Token name').fill('Laptop sync');
  await section.getByLabel('Read notes and files').uncheck();
  await section.getByLabel('WebDAV (file managers, sync apps)').check();
  await section.getByLabel('Current password').fill(GOOD_PASSWORD);
  await section.getByRole('button', { name: 'Create token' }).click();
  const token = (await section.locator('code.secret').textContent())!;
  await expect(section.getByRole('status').first()).toContainText(
    `For WebDAV: server ${address}, your username, and this token as the password.`,
  );
  await expectAccessible(page, 'WebDAV token created');

  const basic = { authorization: `Basic ${Buffer.from(`${username}:${token}`).toString('base64')}` };
  const listing = await page.request.fetch('/dav/', { method: 'PROPFIND', headers: { ...basic, depth: '1' } });
  expect(listing.status()).toBe(207);
  expect(await listing.text()).toContain('<D:href>/dav/Reading%20list.md</D:href>');
  const file = await page.request.get('/dav/Reading%20list.md', { headers: basic });
  expect(await file.text()).toBe('Dune\n');
  const put = await page.request.put('/dav/Reading%20list.md', { headers: basic, data: 'Dune\nSolaris\n' });
  expect(put.status()).toBe(204);

  await page.goto(`/notes/${id}`);
  await expectContent(page, 'Dune\nSolaris\n');
  await expect(await openHistory(page, id)).toHaveText(['Version 2', 'Version 1']);
});
