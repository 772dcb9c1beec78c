import type { User } from '../api/client';
import { clearAllDrafts } from '../notes/drafts';
import { isNetworkError, reachedService, shownFromDevice, unreachable } from './connection';
import { findAnswer, forgetKept, keepAnswer, rememberedUser, rememberUser } from './store';

/**
 * The API's answers seen before, kept on this device for the account signed in and shown when the
 * service cannot be reached: the notes list, notes, their versions, folders and tags. Never kept:
 * sign-in (/api/auth/), attachments, exports, answers marked `no-store`, anything but a 200 JSON
 * answer to a GET. Every API request goes through `withDeviceCopy` (api/client.ts).
 */
let account: string | null = null;

const KEPT = /^\/api\/(notes|folders|tags)(\/|$)/;
const NEVER = /\/(attachments|export)(\/|$)/;

function keepable(url: URL): boolean {
  return KEPT.test(url.pathname) && !NEVER.test(url.pathname);
}

const addressOf = (url: URL) => url.pathname + url.search;

export function withDeviceCopy(send: (request: Request) => Promise<Response>) {
  return async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    const user = account;
    const copyable = user !== null && request.method === 'GET' && keepable(url);
    let response: Response;
    try {
      response = await send(request);
    } catch (error) {
      if (!isNetworkError(error)) throw error;
      unreachable();
      const kept = copyable ? await findAnswer(user, addressOf(url)) : undefined;
      // Signed out (or someone else signed in) meanwhile: nothing of the account is shown.
      if (kept === undefined || account !== user) throw error;
      shownFromDevice(kept.savedAt);
      const headers = new Headers({ 'content-type': kept.contentType, 'x-vellum-kept-at': kept.savedAt });
      if (kept.etag !== null) headers.set('etag', kept.etag);
      if (kept.total !== null) headers.set('x-total-count', kept.total);
      return new Response(kept.body, { status: 200, headers });
    }
    reachedService();
    const contentType = response.headers.get('content-type') ?? '';
    if (
      copyable &&
      response.status === 200 &&
      contentType.includes('json') &&
      !/no-store/i.test(response.headers.get('cache-control') ?? '')
    ) {
      const body = await response.clone().text();
      if (account === user)
        void keepAnswer(user, addressOf(url), {
          body,
          contentType,
          etag: response.headers.get('etag'),
          total: response.headers.get('x-total-count'),
          savedAt: new Date().toISOString(),
        });
    }
    return response;
  };
}

/**
 * The account now signed in (a login, or a session resumed): what another account left on this
 * device goes first.
 */
export async function signedInOnDevice(user: User): Promise<void> {
  const before = await rememberedUser();
  if (before !== null && before.id !== user.id) await forgetDevice();
  account = user.id;
  await rememberUser(user);
}

/** The account that was signed in here last, to open offline (its session cookie still there). */
export async function lastAccountOnDevice(): Promise<User | null> {
  const user = await rememberedUser();
  if (user !== null) account = user.id;
  return user;
}

/** Logout: nothing of the account stays readable on this device (notes kept, drafts). */
export async function forgetDevice(): Promise<void> {
  account = null;
  await Promise.all([forgetKept(), clearAllDrafts()]);
}
