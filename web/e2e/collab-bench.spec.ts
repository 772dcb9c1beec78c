import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import type { Page } from '@playwright/test';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { liveState } from './collab-helpers';
import { contentBox, expect, GOOD_PASSWORD, signUp, test } from './fixtures';
import { keystrokeDurations } from './keystrokes';

// A measurement, not a test (run by `npm run bench:collab`, or VELLUM_E2E_BENCH=1 … --grep
// @bench): keystroke latency in a 1 MB note with the preview on, as reading.spec.ts measures it,
// with live editing off and on. On, a second participant (a Node client of the same account, as
// another device would be) has the note open, so the typing goes out over the socket and a cursor
// of someone else is drawn. Each case prints one `collab-bench {json}` line.

async function tokenFor(page: Page, username: string): Promise<string> {
  const login = await page.request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } });
  return ((await login.json()) as { access_token: string }).access_token;
}

for (const live of [false, true]) {
  test(`@bench 1 MB note, preview on, live editing ${live ? 'on' : 'off'}: keystroke latency`, async ({
    page,
    baseURL,
  }) => {
    test.slow();
    const username = await signUp(page, undefined, undefined, { live });
    const token = await tokenFor(page, username);
    const paragraph =
      'A paragraph with **bold**, _emphasis_, `code` and a [link](https://example.org) to fill the note. ';
    const parts = Math.ceil(1_000_000 / (paragraph.length * 3 + 2));
    const content = Array.from({ length: parts }, (_, i) => `## Part ${i}\n\n${paragraph.repeat(3)}`).join('\n\n');
    const created = await page.request.post('/api/notes', {
      headers: { authorization: `Bearer ${token}` },
      data: { title: 'Big', content },
    });
    expect(created.status()).toBe(201);
    const id = ((await created.json()) as { id: string }).id;

    let other: { provider: HocuspocusProvider; socket: HocuspocusProviderWebsocket; text: Y.Text } | undefined;
    if (live) {
      const doc = new Y.Doc();
      const socket = new HocuspocusProviderWebsocket({
        url: `${baseURL!.replace(/^http/, 'ws')}/api/collab`,
        WebSocketPolyfill: WebSocket,
      });
      const synced = new Promise<void>((resolve) => {
        other = {
          socket,
          text: doc.getText('content'),
          provider: new HocuspocusProvider({
            websocketProvider: socket,
            name: id,
            document: doc,
            token,
            onSynced: () => resolve(),
          }),
        };
      });
      other!.provider.attach();
      await synced;
      // Its cursor at the top: drawn in the page as someone else's.
      const at = Y.relativePositionToJSON(Y.createRelativePositionFromTypeIndex(other!.text, 0));
      other!.provider.setAwarenessField('cursor', { anchor: at, head: at });
    }
    try {
      await page.goto(`/notes/${id}`);
      // Contains: the other participant's cursor and name sit in the first line.
      await expect(contentBox(page).locator('.cm-line').first()).toContainText('## Part 0');
      if (live) await expect(liveState(page)).toBeVisible({ timeout: 30_000 });
      await page.getByRole('button', { name: 'Preview' }).click();
      const preview = page.getByRole('region', { name: 'Preview' });
      await expect(preview.locator('h2').last()).toHaveText(`Part ${parts - 1}`, { timeout: 60_000 });
      await contentBox(page).press('Control+End');
      const bursts = 6;
      const perBurst = 10;
      // Counts and the renderer's main-thread CPU, which the machine's load hardly moves.
      const cdp = await page.context().newCDPSession(page);
      await cdp.send('Performance.enable');
      const metrics = async () =>
        Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
      const before = await metrics();
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
      const after = await metrics();
      const keys = bursts * perBurst;
      const perKey = (name: string, scale = 1) =>
        Math.round((((after[name] ?? 0) - (before[name] ?? 0)) * scale * 10) / keys) / 10;
      const at = (p: number) => durations[Math.min(durations.length - 1, Math.floor(durations.length * p))]!;
      console.log(
        `collab-bench ${JSON.stringify({
          live,
          keys: durations.length,
          p50: at(0.5),
          p90: at(0.9),
          max: durations.at(-1),
          layoutsPerKey: perKey('LayoutCount'),
          mainThreadMsPerKey: perKey('ThreadTime', 1000),
        })}`,
      );
      if (other !== undefined) {
        const text = other.text;
        // The typing went out live: the other participant has it.
        await expect.poll(() => text.toString().endsWith('word5xyz')).toBe(true);
      }
    } finally {
      other?.provider.destroy();
      other?.socket.destroy();
    }
  });
}
