import type { FastifyBaseLogger } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { documentNameOf } from './awareness.js';

/**
 * What a socket may send for notes it has not been let into yet. Hocuspocus keeps every such
 * message until the note's authentication ends, and nothing bounds it: one socket that never
 * authenticated held 114 MB with twelve 8 MiB frames. A client sends its token first and little
 * else before the answer (a few hundred bytes).
 */
export const UNAUTHENTICATED_BYTES = 1024 * 1024;
/** How long a socket may stay open without being let into any note (the client sends its token at once). */
export const AUTHENTICATION_MS = 15_000;

/** Closes for a policy violation (RFC 6455, 1008): the client is told why, and does not retry at once. */
const POLICY = 1008;

interface Watched {
  /** Bytes of each note not yet let into, as Hocuspocus queues them. */
  pending: Map<string, number>;
  total: number;
  timer?: NodeJS.Timeout;
}

/**
 * The socket-level limits of /api/collab, which Hocuspocus leaves to its own HTTP server (Vellum
 * hands it sockets of its own): a broken frame ends the socket, not the process; a socket is let
 * into a note within AUTHENTICATION_MS of opening and sends at most UNAUTHENTICATED_BYTES before.
 */
export class SocketGuard {
  private readonly watched = new WeakMap<WebSocket, Watched>();

  constructor(private readonly log: FastifyBaseLogger) {}

  /** Before Hocuspocus gets the socket, so that its messages are counted before they are queued. */
  watch(ws: WebSocket): void {
    // A frame too large, with a reserved opcode or unmasked is an 'error' on the socket, which ws
    // closes itself (1009, 1002); with no listener the error would end the process.
    ws.on('error', (error) => this.log.debug({ err: error }, 'collab: a socket sent a broken frame'));
    const state: Watched = { pending: new Map(), total: 0 };
    this.watched.set(ws, state);
    state.timer = setTimeout(() => ws.close(POLICY, 'authentication required'), AUTHENTICATION_MS);
    state.timer.unref();
    ws.on('message', (data: RawData) => this.received(ws, state, data));
    ws.on('close', () => clearTimeout(state.timer));
  }

  /** The socket was let into `documentName`: what it queued for it is Hocuspocus' to handle now. */
  admitted(ws: WebSocket, documentName: string): void {
    const state = this.watched.get(ws);
    if (state === undefined) return;
    clearTimeout(state.timer);
    state.timer = undefined;
    state.total -= state.pending.get(documentName) ?? 0;
    state.pending.set(documentName, -1);
  }

  /** The socket's connection to `documentName` ended (the socket stays): its messages count again. */
  left(ws: WebSocket, documentName: string): void {
    this.watched.get(ws)?.pending.delete(documentName);
  }

  private received(ws: WebSocket, state: Watched, data: RawData): void {
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    let name: string;
    try {
      name = documentNameOf(bytes);
    } catch {
      name = ''; // unreadable: Hocuspocus closes on it, and it counts meanwhile
    }
    const before = state.pending.get(name) ?? 0;
    if (before < 0) return; // a note it was let into
    state.pending.set(name, before + bytes.length);
    state.total += bytes.length;
    if (state.total > UNAUTHENTICATED_BYTES) ws.close(POLICY, 'too much before authentication');
  }
}
