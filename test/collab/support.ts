import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { HocuspocusProvider, HocuspocusProviderWebsocket } from '@hocuspocus/provider';
import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import * as Y from 'yjs';
import type { Session } from '../helpers/harness.js';

/** A Node client of /api/collab, as the web editor is one (Hocuspocus' provider over `ws`). */
export interface Client {
  doc: Y.Doc;
  provider: HocuspocusProvider;
  content: Y.Text;
  title: Y.Text;
  /** Settles once the server has sent the document (true), or refused the token (false). */
  ready: Promise<boolean>;
  /** The close code of the socket's last close, if it was closed. */
  closeCode: () => number | undefined;
  /** The reason the server gave when it ended the session. */
  closedReason: () => string | undefined;
  /** The reason the server gave when it refused the connection (`permission-denied`, `too_many_connections`…). */
  refusedReason: () => string | undefined;
  /** The stateless messages the server sent this connection, parsed, in order (`{type: 'role', role}`…). */
  stateless: () => unknown[];
  destroy(): void;
}

/** The app's collab URL, listening on an ephemeral loopback port (once: later calls give the same). */
export async function listening(app: FastifyInstance): Promise<string> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' });
  const { port } = app.server.address() as AddressInfo;
  return `ws://127.0.0.1:${port}/api/collab`;
}

export function connect(url: string, noteId: string, token: string | null): Client {
  const doc = new Y.Doc();
  let code: number | undefined;
  let closedReason: string | undefined;
  let refusedReason: string | undefined;
  const stateless: unknown[] = [];
  const socket = new HocuspocusProviderWebsocket({
    url,
    WebSocketPolyfill: WebSocket,
    // A refused connection stays refused: no reconnecting in tests.
    maxAttempts: 1,
  });
  socket.on('close', ({ event }: { event: { code: number } }) => {
    code = event.code;
  });
  let resolve!: (ok: boolean) => void;
  const ready = new Promise<boolean>((r) => {
    resolve = r;
  });
  const provider = new HocuspocusProvider({
    websocketProvider: socket,
    name: noteId,
    document: doc,
    token,
    onSynced: () => resolve(true),
    onStateless: ({ payload }) => stateless.push(JSON.parse(payload)),
    onAuthenticationFailed: ({ reason }) => {
      refusedReason = reason;
      resolve(false);
    },
    // The server ends this document's session (access ended): a close message, reason and all.
    onClose: ({ event }) => {
      code ??= event.code;
      closedReason = event.reason;
    },
  });
  socket.on('close', () => resolve(false));
  provider.attach();
  return {
    doc,
    provider,
    content: doc.getText('content'),
    title: doc.getText('title'),
    ready,
    closeCode: () => code,
    closedReason: () => closedReason,
    refusedReason: () => refusedReason,
    stateless: () => [...stateless],
    destroy() {
      provider.destroy();
      socket.destroy();
    },
  };
}

/** A note of `owner`'s ("text\n") that each of `editors` may edit; its id. */
export async function sharedNote(app: FastifyInstance, owner: Session, ...editors: Session[]): Promise<string> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/notes',
    headers: owner.auth,
    payload: { title: 'Shared', content: 'text\n' },
  });
  assert.equal(created.statusCode, 201, created.body);
  const id = created.json().id as string;
  for (const editor of editors) {
    const shared = await app.inject({
      method: 'POST',
      url: `/api/notes/${id}/members`,
      headers: owner.auth,
      payload: { username: editor.username, role: 'editor' },
    });
    assert.equal(shared.statusCode, 201, shared.body);
  }
  return id;
}

/**
 * A message as Hocuspocus frames one, by hand (what no provider would send): numbers as lib0
 * variable-length integers, strings with their UTF-8 length first. The document's name comes first.
 */
export function frame(...parts: Array<number | string>): Buffer {
  const bytes: number[] = [];
  const varUint = (n: number) => {
    for (; n >= 0x80; n = Math.floor(n / 0x80)) bytes.push((n % 0x80) | 0x80);
    bytes.push(n);
  };
  for (const part of parts) {
    if (typeof part === 'number') varUint(part);
    else {
      const utf8 = Buffer.from(part, 'utf8');
      varUint(utf8.length);
      bytes.push(...utf8);
    }
  }
  return Buffer.from(bytes);
}
