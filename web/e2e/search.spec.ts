import { expect, GOOD_PASSWORD, signUp, test } from './fixtures';

test('search as you type: the last word matches the start of words; a full page says there may be more', async ({
  page,
  request,
}) => {
  const username = await signUp(page);
  const { access_token: token } = (await (
    await request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } })
  ).json()) as { access_token: string };
  const headers = { authorization: `Bearer ${token}` };
  expect(
    (
      await request.post('/api/notes', {
        headers,
        data: { title: 'Roadmap for spring', content: 'Milestones and dates.' },
      })
    ).status(),
  ).toBe(201);
  for (let i = 0; i < 50; i++) {
    expect(
      (
        await request.post('/api/notes', { headers, data: { title: `Minutes ${i}`, content: 'weekly meeting notes' } })
      ).status(),
    ).toBe(201);
  }
  await page.reload();

  const search = page.getByRole('searchbox', { name: 'Search notes' });
  const results = page.getByRole('list', { name: 'Search results' }).getByRole('listitem');
  await search.fill('road');
  await expect(results).toHaveCount(1);
  await expect(results.first()).toContainText('Roadmap for spring');
  // A space ends the word: "road" as a whole word is in no note.
  await search.fill('road ');
  await expect(page.getByRole('status').filter({ hasText: 'No notes match.' })).toBeVisible();

  await search.fill('meet');
  await expect(results).toHaveCount(50);
  await expect(
    page.getByRole('status').filter({ hasText: 'The first 50 matches, best first. Add a word to narrow the search.' }),
  ).toBeVisible();
  await search.fill('milestones');
  await expect(results).toHaveCount(1);
  await expect(page.getByText('The first 50 matches')).toBeHidden();
});
