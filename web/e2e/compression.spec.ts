import { expect, test } from './fixtures';

// The real build on the wire: the browser asks for br and gets the build's compressed copies of the
// page, its scripts and its styles (web/compress-plugin.ts, served by src/web/web.routes.ts).
test('the first screen arrives Brotli-compressed and works', async ({ page }) => {
  const encodings = new Map<string, string | undefined>();
  page.on('response', (response) => {
    const url = new URL(response.url());
    if (url.pathname === '/' || url.pathname.startsWith('/assets/'))
      encodings.set(url.pathname, response.headers()['content-encoding']);
  });
  await page.goto('/login');
  await expect(page.getByRole('button', { name: 'Log in' })).toBeVisible();
  const scripts = [...encodings].filter(([name]) => name.endsWith('.js'));
  const styles = [...encodings].filter(([name]) => name.endsWith('.css'));
  expect(scripts.length).toBeGreaterThan(0);
  expect(styles.length).toBeGreaterThan(0);
  for (const [name, encoding] of [...scripts, ...styles]) expect(encoding, name).toBe('br');
});
