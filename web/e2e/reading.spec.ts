import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from '@playwright/test';
import { contentBox, expect, expectAccessible, GOOD_PASSWORD, signUp, test } from './fixtures';
import { keystrokeDurations } from './keystrokes';

async function tokenFor(page: Page, username: string): Promise<string> {
  const login = await page.request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } });
  return ((await login.json()) as { access_token: string }).access_token;
}

async function noteThroughApi(page: Page, token: string, title: string, content: string): Promise<string> {
  const res = await page.request.post('/api/notes', {
    headers: { authorization: `Bearer ${token}` },
    data: { title, content },
  });
  expect(res.status()).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

const RICH = [
  '# Trip plan',
  '',
  '- [x] book the train',
  '- [ ] pack the tent',
  '',
  '> Leave early.',
  '',
  '| Day | Where |',
  '| --- | ----- |',
  '| 1 | Lyon |',
  '',
  '```js',
  'const total = 3;',
  '```',
].join('\n');

test('chosen on the device, a note opens for reading: rendered, with task lists, a table, a quote and highlighted code; E or Edit turns it into the editor and back', async ({
  page,
}) => {
  const username = await signUp(page, undefined, undefined, { reading: true });
  const id = await noteThroughApi(page, await tokenFor(page, username), 'Trip', RICH);
  await page.goto(`/notes/${id}`);
  const reading = page.getByRole('article', { name: 'Trip' });
  await expect(reading.getByRole('heading', { name: 'Trip plan' })).toBeVisible();
  await expect(reading.getByRole('checkbox')).toHaveCount(2);
  await expect(reading.getByRole('checkbox').first()).toBeChecked();
  // The owner's boxes tick (and save: links-tasks-quotes.spec.ts).
  await expect(reading.getByRole('checkbox').first()).toBeEnabled();
  await expect(reading.getByRole('checkbox').nth(1)).not.toBeChecked();
  await expect(reading.getByRole('table').getByRole('cell', { name: 'Lyon' })).toBeVisible();
  await expect(reading.locator('blockquote')).toHaveText('Leave early.');
  // Code naming its language is highlighted (highlight.js, loaded for this note only).
  await expect(reading.locator('pre code.language-js .hljs-keyword')).toHaveText('const');
  await expect(reading.locator('pre code')).toHaveText('const total = 3;');
  await expect(contentBox(page)).toBeHidden();
  const edit = page.getByRole('button', { name: 'Edit' });
  await expect(edit).toHaveAttribute('aria-pressed', 'false');
  // Preview belongs to editing.
  await expect(page.getByRole('button', { name: 'Preview' })).toHaveCount(0);
  await expectAccessible(page, 'reading view');

  await edit.focus();
  await page.keyboard.press('e');
  await expect(edit).toHaveAttribute('aria-pressed', 'true');
  await expect(reading).toHaveCount(0);
  await contentBox(page).press('Control+End');
  await page.keyboard.type('\n\nAdded while editing.');
  await edit.click();
  // Reading shows the text as it is now, saved or not.
  await expect(page.getByRole('article', { name: 'Trip' }).getByText('Added while editing.')).toBeVisible();
  await expect(page.getByText('Unsaved changes')).toBeVisible();
  await page.keyboard.press('Control+s');
  await expect(page.getByText('Saved as version 2')).toBeVisible();

  // Turned off on this device (the default), notes open in the editor.
  await page.getByRole('link', { name: 'Account' }).click();
  await page.getByRole('checkbox', { name: 'Open notes for reading, with Edit to change them' }).uncheck();
  await page.goto(`/notes/${id}`);
  await expect(contentBox(page)).toBeVisible();
  await expect(page.getByRole('button', { name: 'Edit' })).toHaveAttribute('aria-pressed', 'true');
  // E reads it.
  await page.getByRole('button', { name: 'Edit' }).focus();
  await page.keyboard.press('e');
  await expect(page.getByRole('article', { name: 'Trip' }).getByRole('heading', { name: 'Trip plan' })).toBeVisible();
});

/**
 * The budget is 50 ms (issue 27). On this machine (two cores, the server and the browser on them)
 * this measures 24–32 ms, 32–40 ms with a third process keeping one core busy (before the editor
 * parsed long notes to the end in idle time: 40 and 48–56 ms; a CI run printed 80 ms). The figure
 * is printed on every run, but not asserted: a wall-clock bound fails on a busy machine (issue 38).
 * The old behaviour (the whole note re-rendered on the typing path: 4.2 s a keystroke at 300 KB)
 * still fails this test: its 60 keys would outlast the test's time-out.
 */
test('a 1 MB note types smoothly with the preview on: keystroke p90 printed, the typing reaches the preview', async ({
  page,
}) => {
  test.slow();
  const username = await signUp(page);
  const paragraph =
    'A paragraph with **bold**, _emphasis_, `code` and a [link](https://example.org) to fill the note. ';
  const parts = Math.ceil(1_000_000 / (paragraph.length * 3 + 2));
  const content = Array.from({ length: parts }, (_, i) => `## Part ${i}\n\n${paragraph.repeat(3)}`).join('\n\n');
  expect(content.length).toBeGreaterThanOrEqual(1_000_000);
  const id = await noteThroughApi(page, await tokenFor(page, username), 'Big', content);
  await page.goto(`/notes/${id}`);
  await expect(contentBox(page).locator('.cm-line').first()).toHaveText('## Part 0');
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('region', { name: 'Preview' });
  await expect(preview.locator('h2').first()).toHaveText('Part 0');
  // Rendered whole: the first rendering of 1 MB takes seconds, in slices that leave typing alone.
  await expect(preview.locator('h2').last()).toHaveText(`Part ${parts - 1}`, { timeout: 30_000 });
  // At the end, as soon as the preview is whole: the editor then still parses the megabyte down
  // to the end in the background, in slices, and each keystroke shares the time with that work.
  await contentBox(page).press('Control+End');

  // Typed as people type: bursts, with pauses in which the preview catches up.
  const bursts = 6;
  const perBurst = 10;
  const durations = await keystrokeDurations(
    page,
    async () => {
      for (let b = 0; b < bursts; b += 1) {
        await page.keyboard.type(` word${b}xyz`.slice(0, perBurst), { delay: 60 });
        await page.waitForTimeout(700);
      }
    },
    bursts * perBurst,
  );
  const p90 = durations[Math.floor(durations.length * 0.9)]!;
  console.log(
    `1 MB note, preview on: keystroke p90 ${p90} ms, max ${durations.at(-1)} ms over ${durations.length} keys`,
  );
  await expect(preview.locator('p').last()).toContainText(
    'fill the note. word0xyz word1xyz word2xyz word3xyz word4xyz word5xyz',
  );
});

test('images from other sites load only once the reader allows them for the note; other notes still load none', async ({
  page,
}) => {
  // Another site: a local server on another port (another origin), counting what it is asked for.
  const asked: string[] = [];
  const PNG = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
    'base64',
  );
  const site = http.createServer((request, response) => {
    asked.push(request.url!);
    response.writeHead(200, { 'content-type': 'image/png', 'access-control-allow-origin': '*' }).end(PNG);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  try {
    const username = await signUp(page, undefined, undefined, { reading: true });
    const token = await tokenFor(page, username);
    const other = await noteThroughApi(page, token, 'Other', `![pixel](${origin}/other.png)`);
    const id = await noteThroughApi(
      page,
      token,
      'Trip',
      `Before\n\n![the view](${origin}/view.png)\n\n<img src="${origin}/raw.png" srcset="${origin}/set.png 2x" alt="raw"> <img data-remote="${origin}/forged.png" alt="forged">`,
    );
    await page.goto(`/notes/${id}`);
    const note = page.getByRole('region', { name: 'Note' }).last();
    await expect(note.getByText('Before')).toBeVisible();
    await expect(
      note.getByText('Images from other sites are not shown: loading them tells those sites that you read this note.'),
    ).toBeVisible();
    await expect(note.getByRole('img', { name: 'the view' })).not.toHaveAttribute('src');
    await expectAccessible(page, 'a note with images from other sites held back');
    expect(asked).toEqual([]);

    // Allowed: the page comes back with the policy that lets them load, and loads this note's.
    await note.getByRole('button', { name: 'Show images from other sites' }).click();
    await expect(page).toHaveURL(/[?&]remote-images=on/);
    const view = page.getByRole('img', { name: 'the view' });
    await expect(view).toHaveAttribute('src', `${origin}/view.png`);
    await expect.poll(() => view.evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth)).toBe(1);
    await expect(page.getByText('Images from other sites are not shown')).toHaveCount(0);
    // The raw image is asked for beside the view, on its own connection: waited for, not assumed.
    await expect.poll(() => [...asked].sort()).toEqual(['/raw.png', '/view.png']);

    // Another note on the same page stays as it was: held back, nothing asked for.
    await page.getByRole('link', { name: /^Other/ }).click();
    await expect(page).toHaveURL(new RegExp(`/notes/${other}`));
    await expect(page.getByRole('button', { name: 'Show images from other sites' })).toBeVisible();
    expect(asked.sort()).toEqual(['/raw.png', '/view.png']);

    // The choice stays with the note on this device: a fresh page offers to show them again at once.
    await page.goto(`/notes/${id}`);
    await expect(page.getByText('You allowed images from other sites in this note.')).toBeVisible();
    expect(asked.sort()).toEqual(['/raw.png', '/view.png']);
  } finally {
    site.close();
  }
});

test('on a 375 px phone, Preview shows the rendered note in place of the text, not under it; pressed again, the text is back as it was', async ({
  page,
}) => {
  await page.setViewportSize({ width: 375, height: 740 });
  await signUp(page);
  await page.getByRole('button', { name: 'New note' }).click();
  await page.getByLabel('Title').fill('Phone');
  await contentBox(page).fill('# Heading\n\nSome **bold** text');
  await page.getByRole('button', { name: 'Preview' }).click();
  await expect(
    page.getByRole('region', { name: 'Preview' }).getByRole('heading', { name: 'Heading' }),
  ).toBeInViewport();
  await expect(contentBox(page)).toBeHidden();
  await expectAccessible(page, 'phone preview');
  await page.getByRole('button', { name: 'Preview' }).click();
  await expect(page.getByRole('region', { name: 'Preview' })).toHaveCount(0);
  await expect(contentBox(page)).toBeVisible();
  await expect(contentBox(page)).toContainText('Some **bold** text');
});

test('split view: the preview follows the editor as it scrolls, showing the part of the note at the top of the text', async ({
  page,
}) => {
  await page.setViewportSize({ width: 1280, height: 800 });
  const username = await signUp(page);
  const token = await tokenFor(page, username);
  // Lines too short to wrap: the editor knows every line's height before drawing it, so where the
  // text scrolls to is exact (wrapped lines it has not drawn yet are estimates, corrected on drawing).
  const sections = Array.from({ length: 120 }, (_, i) => `## Section ${i}\n\nParagraph ${i}.\n`).join('\n');
  const id = await noteThroughApi(page, token, 'Long', sections);
  await page.goto(`/notes/${id}`);
  await expect(contentBox(page).locator('.cm-line').first()).toHaveText('## Section 0');
  await page.getByRole('button', { name: 'Preview' }).click();
  const preview = page.getByRole('region', { name: 'Preview' });
  await expect(preview.getByRole('heading', { name: 'Section 119' })).toBeAttached();

  for (const share of [0.5, 0.8, 0.2]) {
    await page.locator('.open').evaluate((pane, f) => {
      pane.scrollTop = (pane.scrollHeight - pane.clientHeight) * f;
    }, share);
    // The section heading nearest the top of the text as it shows now, and where the preview put it.
    await expect
      .poll(
        async () => {
          const top = await page.evaluate(() => {
            const host = document.querySelector('.markdown-editor > div')!;
            const toolbar = document.querySelector('.editor .toolbar')!.getBoundingClientRect().bottom;
            const lines = Array.from(host.shadowRoot!.querySelectorAll('.cm-line')).filter((l) =>
              /^## Section \d+$/.test(l.textContent ?? ''),
            );
            return lines.find((l) => l.getBoundingClientRect().top >= toolbar)?.textContent?.slice(3) ?? '';
          });
          // The editor draws the lines of where it scrolled to on its next frame: none yet, ask again.
          if (top === '') return false;
          const heading = preview.getByRole('heading', { name: top, exact: true });
          const [box, at] = await Promise.all([preview.boundingBox(), heading.boundingBox({ timeout: 1000 })]);
          // Below the preview's top by at most a section's height (the heading comes within the first lines).
          return at !== null && box !== null && at.y >= box.y - 5 && at.y < box.y + 200;
        },
        { message: `preview follows the text at ${share}` },
      )
      .toBe(true);
  }
});
