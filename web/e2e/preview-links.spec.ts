import { contentBox, expect, signUp, test } from './fixtures';

test('the preview renders whatever the links hold, and no link breaks it', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await signUp(page);
  await page.getByRole('button', { name: 'New note' }).click();
  await expect(page.getByLabel('Title')).toHaveValue('Untitled');
  const bad = [
    '[ipv6 unclosed](http://[::1)',
    '[script](javascript:alert(1))',
    '[percent](%)',
    '[bad escape](http://%zz)',
    '[bad port](http://example.com:99999/)',
    '[space](<http://exa mple.com>)',
    '<a href="http://[">raw html</a>',
    `[long](http://example.com/${'a'.repeat(50_000)})`,
    '[same site](/notes)',
    '[fine](https://example.com/ok)',
  ];
  await contentBox(page).fill(bad.join('\n\n'));
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('region', { name: 'Preview' });
  for (const text of [
    'ipv6 unclosed',
    'script',
    'percent',
    'bad escape',
    'bad port',
    'raw html',
    'long',
    'same site',
    'fine',
  ]) {
    await expect(preview.getByText(text, { exact: true })).toBeVisible();
  }
  await expect(preview.getByText('Rendering…')).toHaveCount(0);
  await expect(preview.getByRole('alert')).toHaveCount(0);
  // A link that is no URL stays as text; others keep their usual treatment.
  await expect(preview.locator('a', { hasText: 'ipv6 unclosed' })).not.toHaveAttribute('href');
  await expect(preview.locator('a[href^="javascript"]')).toHaveCount(0);
  await expect(preview.getByRole('link', { name: 'fine' })).toHaveAttribute('rel', 'noopener noreferrer');
  await expect(preview.getByRole('link', { name: 'same site' })).not.toHaveAttribute('target');
  expect(errors).toEqual([]);
});
