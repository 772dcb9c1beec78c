import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import WebSocket from 'ws';
import * as Y from 'yjs';
import { liveState } from './collab-helpers';
import { contentBox, expect, GOOD_PASSWORD, signUp, test } from './fixtures';

// The server's cap on live connections per account (20 on an instance): the note over it is edited
// without live editing, says why, and goes live once a connection elsewhere has closed.
test('over the cap of live connections, a note says why it is not live, then goes live once another closes', async ({
  page,
  baseURL,
}) => {
  test.slow();
  const username = await signUp(page, undefined, undefined, { live: true });
  const login = await page.request.post('/api/auth/login', { data: { username, password: GOOD_PASSWORD } });
  const token = ((await login.json()) as { access_token: string }).access_token;
  const create = async (title: string) => {
    const res = await page.request.post('/api/notes', {
      headers: { authorization: `Bearer ${token}` },
      data: { title, content: `${title}\n` },
    });
    expect(res.status()).toBe(201);
    return ((await res.json()) as { id: string }).id;
  };
  const elsewhere = await create('Elsewhere');
  const here = await create('Here');
  // Twenty connections of this account from "other devices".
  const others: { provider: HocuspocusProvider; socket: HocuspocusProviderWebsocket }[] = [];
  try {
    for (let i = 0; i < 20; i += 1) {
      const socket = new HocuspocusProviderWebsocket({
        url: `${baseURL!.replace(/^http/, 'ws')}/api/collab`,
        WebSocketPolyfill: WebSocket,
      });
      let provider!: HocuspocusProvider;
      await new Promise<void>((resolve) => {
        provider = new HocuspocusProvider({
          websocketProvider: socket,
          name: elsewhere,
          document: new Y.Doc(),
          token,
          onSynced: () => resolve(),
        });
        provider.attach();
      });
      others.push({ provider, socket });
    }
    await page.goto(`/notes/${here}`);
    await expect(contentBox(page).locator('.cm-line').first()).toHaveText('Here');
    await expect(page.getByRole('status').filter({ hasText: 'Not editing live' })).toContainText(
      'too many notes open live in other tabs or on other devices',
    );
    await expect(liveState(page)).toHaveCount(0);
    // One of the others closes: the next try (2 s after the refusal) is let in.
    const first = others.shift()!;
    first.provider.destroy();
    first.socket.destroy();
    await expect(liveState(page)).toHaveText('Live · Saved', { timeout: 20_000 });
    await expect(page.getByRole('status').filter({ hasText: 'Not editing live' })).toHaveCount(0);
  } finally {
    for (const other of others) {
      other.provider.destroy();
      other.socket.destroy();
    }
  }
});
