import assert from 'node:assert/strict';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { getCsrf, REFRESH } from './auth.js';
import { cookie, GOOD_PASSWORD, login, signup, uniqueName, type Session, type TestContext } from './harness.js';
import type { ApiRequest, Proposal } from './openapi-requests.js';
import { SoftAuthenticator } from './soft-authenticator.js';
import { totpCode } from './totp.js';

/**
 * The accounts, notes and sessions behind the generated requests of the conformance test: real ids
 * for path parameters, and the few real values an operation needs to succeed (a password, the
 * current version). Operations that destroy what they act on (deleting an account, a note, a
 * session; rotating the refresh token; changing a password) get fresh things of their own, so that
 * no request spoils the ones after it.
 */

export type Role = 'user' | 'admin';

export interface Credentials {
  headers?: Record<string, string>;
  cookies?: Record<string, string>;
}

/** A request made ready: real values in, and the credentials to send it with. */
export interface Prepared {
  request: ApiRequest;
  credentials: Credentials;
  /** Called with the answer, to keep the world in step (a rotated token, a changed password). */
  after?: (res: LightMyRequestResponse) => void;
}

interface Note {
  id: string;
  versionIds: string[];
  version: number;
}

/** A word the role's notes contain, for search. */
export const SEARCH_WORD = 'lantern';

export class World {
  private readonly accounts = new Map<string, Session>();
  private readonly shared = new Map<Role, Note>();
  private readonly cookieSessions = new Map<Role, Session>();
  private readonly passkeys = new Map<Role, SoftAuthenticator>();
  /** The file the last share link made for a request links to (its attachmentID). */
  private sharedFile: string | undefined;

  constructor(private readonly ctx: TestContext) {}

  private async account(key: string, role: Role): Promise<Session> {
    let session = this.accounts.get(key);
    if (session === undefined) {
      session = await this.freshAccount(role);
      this.accounts.set(key, session);
    }
    return session;
  }

  private async freshAccount(role: Role): Promise<Session> {
    const { id, username } = await signup(this.ctx.app, uniqueName(role === 'admin' ? 'cadmin' : 'cuser'));
    if (role === 'admin')
      await this.ctx.database.db.updateTable('users').set({ is_admin: true }).where('id', '=', id).execute();
    return login(this.ctx.app, username);
  }

  inject(options: InjectOptions): Promise<LightMyRequestResponse> {
    return this.ctx.app.inject(options);
  }

  /** The role's own account: every operation without a reason for another one runs as it. */
  async main(role: Role): Promise<Session> {
    const key = `main-${role}`;
    const session = await this.account(key, role);
    // Logout and "sign out everywhere else" end its session, and its access token with it on
    // /api/auth (CONTRACT.md part 3): the operations after them get a new one.
    if ((await this.ctx.app.inject({ url: '/api/auth/me', headers: session.auth })).statusCode !== 401) return session;
    const renewed = await login(this.ctx.app, session.username, session.password);
    this.accounts.set(key, renewed);
    return renewed;
  }

  private async call(
    session: Session,
    method: string,
    url: string,
    payload?: object,
    headers: Record<string, string> = {},
  ) {
    const res = await this.ctx.app.inject({
      method: method as 'GET',
      url,
      headers: { ...session.auth, ...headers },
      ...(payload ? { payload } : {}),
    });
    assert.ok(res.statusCode < 300, `set-up ${method} ${url}: ${res.statusCode} ${res.body}`);
    return res;
  }

  /** A note with three versions whose words include SEARCH_WORD. */
  private async newNote(session: Session): Promise<Note> {
    const created = (
      await this.call(session, 'POST', '/api/notes', { title: 'Harbor', content: `a ${SEARCH_WORD} by the sea` })
    ).json() as { id: string; version_id: string };
    for (const [n, content] of [
      [1, 'second draft'],
      [2, `third ${SEARCH_WORD} draft`],
    ] as const) {
      await this.call(
        session,
        'POST',
        `/api/notes/${created.id}/versions`,
        { title: 'Harbor', content },
        { 'if-match': `"${n}"` },
      );
    }
    const versions = (await this.call(session, 'GET', `/api/notes/${created.id}/versions`)).json() as Array<{
      id: string;
      version: number;
    }>;
    return { id: created.id, versionIds: versions.sort((a, b) => a.version - b.version).map((v) => v.id), version: 3 };
  }

  private async sharedNote(role: Role): Promise<Note> {
    let note = this.shared.get(role);
    if (note === undefined) {
      note = await this.newNote(await this.main(role));
      this.shared.set(role, note);
    }
    return note;
  }

  /** The role's account with a refresh token of its own, for the cookie routes (logout revokes the main one's). */
  private async cookieSession(role: Role, fresh: boolean): Promise<Session> {
    let session = this.cookieSessions.get(role);
    if (session === undefined || fresh) {
      const main = await this.main(role);
      session = await login(this.ctx.app, main.username, main.password);
      this.cookieSessions.set(role, session);
    }
    return session;
  }

  /** A fresh account with an authenticator app turned on, and its recovery codes. */
  private async enrolled(role: Role): Promise<{ account: Session; recoveryCodes: string[] }> {
    const account = await this.freshAccount(role);
    const { secret } = (
      await this.call(account, 'POST', '/api/auth/2fa/totp', { password: account.password })
    ).json() as { secret: string };
    const confirm = await this.call(account, 'POST', '/api/auth/2fa/totp/confirm', { code: totpCode(secret) });
    return { account, recoveryCodes: (confirm.json() as { recovery_codes: string[] }).recovery_codes };
  }

  /** A new passkey of the session's account, from a software authenticator; its id. */
  private async newPasskey(
    session: Session,
    authenticator = new SoftAuthenticator(this.ctx.config.publicUrl),
  ): Promise<string> {
    const options = (
      await this.call(session, 'POST', '/api/auth/passkeys/options', { password: session.password })
    ).json() as { challenge: string };
    const res = await this.call(session, 'POST', '/api/auth/passkeys', {
      name: 'Key',
      credential: authenticator.register(options),
    });
    return (res.json() as { id: string }).id;
  }

  private async uploadFile(session: Session): Promise<string> {
    const boundary = 'world-boundary';
    const res = await this.ctx.app.inject({
      method: 'POST',
      url: '/api/attachments',
      headers: { ...session.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
      payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${uniqueName('file')}\r\n--${boundary}--\r\n`,
    });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { id: string }).id;
  }

  /** Called before the cases of each operation: the cookie routes start from a refresh token nobody used. */
  async startOperation(key: string, role: Role): Promise<void> {
    if (key.includes('/api/auth/cookie/')) await this.cookieSession(role, true);
  }

  /** Real ids in, hints applied, credentials chosen. */
  async prepare(key: string, role: Role, proposal: Proposal): Promise<Prepared> {
    const [method, path] = key.split(' ') as [string, string];
    const session = await this.main(role);
    const request: ApiRequest = {
      method,
      path,
      pathParams: {},
      query: [...proposal.query],
      headers: { ...proposal.headers },
      body: proposal.body === undefined ? undefined : { ...proposal.body, value: structuredClone(proposal.body.value) },
      credentials: proposal.credentials,
    };
    const wantsReal = Object.values(proposal.path).some((v) => 'real' in v);
    const mutates = method !== 'GET';
    let note: Note | undefined;
    if (wantsReal && path.includes('{noteID}')) {
      note = mutates || path.startsWith('/api/trash/') ? await this.newNote(session) : await this.sharedNote(role);
      if (path.startsWith('/api/trash/')) await this.call(session, 'DELETE', `/api/notes/${note.id}`);
    }
    for (const [name, value] of Object.entries(proposal.path)) {
      if (!('real' in value)) {
        request.pathParams[name] = value.value;
        continue;
      }
      switch (name) {
        case 'noteID':
          request.pathParams[name] = note!.id;
          break;
        case 'versionID':
          request.pathParams[name] = note!.versionIds[1]!;
          break;
        case 'sessionID': {
          // A session of its own: revoking it leaves the others alone.
          const extra = await login(this.ctx.app, session.username, session.password);
          const sessions = (await this.call(extra, 'GET', '/api/auth/sessions')).json() as Array<{ id: string }>;
          request.pathParams[name] = sessions[0]!.id;
          break;
        }
        // A folder of its own: renaming, moving or deleting it touches nothing else.
        case 'folderID': {
          const res = await this.call(session, 'POST', '/api/folders', { name: uniqueName('folder') });
          request.pathParams[name] = (res.json() as { id: string }).id;
          break;
        }
        // A link to a note of its own whose text links to a file (the public file route needs both).
        case 'token': {
          const file = await this.uploadFile(session);
          const created = (
            await this.call(session, 'POST', '/api/notes', {
              title: 'shared',
              content: `![f](/api/attachments/${file})`,
            })
          ).json() as { id: string };
          const share = (await this.call(session, 'POST', `/api/notes/${created.id}/shares`, {})).json() as {
            token: string;
          };
          request.pathParams[name] = share.token;
          this.sharedFile = file;
          break;
        }
        case 'shareID': {
          const share = (await this.call(session, 'POST', `/api/notes/${note!.id}/shares`, {})).json() as {
            id: string;
          };
          request.pathParams[name] = share.id;
          break;
        }
        // A file of its own: deleting it touches nothing else.
        case 'attachmentID': {
          if (path.startsWith('/api/shared/') && this.sharedFile !== undefined) {
            request.pathParams[name] = this.sharedFile;
            break;
          }
          const boundary = 'world-boundary';
          const res = await this.ctx.app.inject({
            method: 'POST',
            url: '/api/attachments',
            headers: { ...session.auth, 'content-type': `multipart/form-data; boundary=${boundary}` },
            payload: `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\nContent-Type: text/plain\r\n\r\n${uniqueName('file')}\r\n--${boundary}--\r\n`,
          });
          assert.equal(res.statusCode, 201, res.body);
          request.pathParams[name] = (res.json() as { id: string }).id;
          break;
        }
        // An account to delete; a user is refused before the id matters, so its own will do.
        case 'id':
          request.pathParams[name] =
            role === 'admin' ? (await signup(this.ctx.app, uniqueName('victim'))).id : session.userId;
          break;
        // Someone the note is shared with: changing their role or removing them touches nothing else.
        case 'userID': {
          const member = await signup(this.ctx.app, uniqueName('member'));
          await this.call(session, 'POST', `/api/notes/${note!.id}/members`, {
            username: member.username,
            role: 'viewer',
          });
          request.pathParams[name] = member.id;
          break;
        }
        default:
          throw new Error(`no real value for path parameter ${name}`);
      }
    }
    const prepared: Prepared = { request, credentials: { headers: session.auth } };
    if (proposal.real) await this.hint(key, role, proposal, prepared, note);
    return prepared;
  }

  /** The values that let an operation succeed, put where the proposal has generated ones. */
  private async hint(
    key: string,
    role: Role,
    proposal: Proposal,
    prepared: Prepared,
    note: Note | undefined,
  ): Promise<void> {
    const { request } = prepared;
    const body = (request.body?.value ?? {}) as Record<string, unknown>;
    const setBody = (changes: Record<string, unknown>) => {
      request.body = { contentType: 'application/json', value: { ...body, ...changes } };
    };
    const setQuery = (name: string, value: string) => {
      request.query = [...request.query.filter(([k]) => k !== name), [name, value]];
    };
    switch (key) {
      case 'POST /api/auth/login': {
        const account = await this.account('login', role);
        setBody({ username: account.username, password: account.password });
        break;
      }
      case 'PUT /api/auth/owner': {
        const account = await this.account(`owner-${role}`, role);
        prepared.credentials = { headers: account.auth };
        const strong = `${GOOD_PASSWORD}-${proposal.pick}`;
        setBody({ old_password: account.password, ...(proposal.pick % 2 === 0 ? { new_password: strong } : {}) });
        prepared.after = (res) => {
          if (res.statusCode !== 200) return;
          const newPassword = (request.body!.value as { new_password: string }).new_password;
          const token = (res.json() as { access_token: string }).access_token;
          this.accounts.set(`owner-${role}`, {
            ...account,
            password: newPassword,
            accessToken: token,
            auth: { authorization: `Bearer ${token}` },
          });
        };
        break;
      }
      case 'DELETE /api/auth/owner': {
        const account = await this.freshAccount(role);
        prepared.credentials = { headers: account.auth };
        setBody({ password: account.password });
        break;
      }
      case 'GET /api/auth/cookie/csrf':
      case 'POST /api/auth/cookie/refresh': {
        const session = await this.cookieSession(role, false);
        prepared.credentials = { cookies: { [REFRESH]: session.refreshToken } };
        if (key.startsWith('POST')) {
          const csrf = await getCsrf(this.ctx.app, session.refreshToken);
          request.headers['x-csrf-token'] = csrf.token;
          prepared.credentials.cookies!['app.csrf_secret'] = csrf.secret;
          prepared.after = (res) => {
            const rotated = cookie(res, REFRESH)?.value;
            if (res.statusCode === 200 && rotated) this.cookieSessions.set(role, { ...session, refreshToken: rotated });
          };
        }
        break;
      }
      case 'POST /api/notes/{noteID}/versions':
      case 'POST /api/notes/{noteID}/restore': {
        if (note === undefined) break;
        if (proposal.pick % 3 === 0) delete request.headers['if-match'];
        else request.headers['if-match'] = `"${note.version}"`;
        if (key.endsWith('restore')) {
          setBody(
            proposal.pick % 2 === 0
              ? { version: 1 + (proposal.pick % note.version) }
              : { version_id: note.versionIds[proposal.pick % note.versionIds.length] },
          );
          delete (request.body!.value as Record<string, unknown>)[proposal.pick % 2 === 0 ? 'version_id' : 'version'];
        }
        break;
      }
      case 'GET /api/notes/{noteID}/diff':
        if (note === undefined) break;
        setQuery('from', String(1 + (proposal.pick % 3)));
        setQuery('to', String(1 + ((proposal.pick >> 2) % 3)));
        break;
      case 'GET /api/notes/search':
        setQuery('q', SEARCH_WORD);
        break;
      case 'GET /api/auth/admin/events':
        if (request.query.some(([k]) => k === 'user_id')) setQuery('user_id', (await this.main('user')).userId);
        break;
      case 'POST /api/import':
        if (request.body !== undefined) request.body.value = repairImport(request.body.value);
        break;
      case 'POST /api/auth/2fa/totp': {
        const account = await this.account(`totp-${role}`, role);
        prepared.credentials = { headers: account.auth };
        setBody({ password: account.password });
        break;
      }
      case 'POST /api/auth/2fa/totp/confirm': {
        const account = await this.freshAccount(role);
        const { secret } = (
          await this.call(account, 'POST', '/api/auth/2fa/totp', { password: account.password })
        ).json() as { secret: string };
        prepared.credentials = { headers: account.auth };
        setBody({ code: totpCode(secret) });
        break;
      }
      case 'DELETE /api/auth/2fa/totp':
      case 'POST /api/auth/2fa/recovery-codes': {
        const { account, recoveryCodes } = await this.enrolled(role);
        prepared.credentials = { headers: account.auth };
        setBody({ password: account.password, code: recoveryCodes[proposal.pick % recoveryCodes.length] });
        break;
      }
      case 'POST /api/auth/passkeys': {
        // The password on the options or on the answer, by turns: either makes the enrolment.
        const session = await this.main(role);
        const early = proposal.pick % 2 === 0;
        const options = (
          await this.call(session, 'POST', '/api/auth/passkeys/options', early ? { password: session.password } : {})
        ).json() as { challenge: string };
        setBody({
          credential: new SoftAuthenticator(this.ctx.config.publicUrl).register(options),
          ...(early ? {} : { password: session.password }),
        });
        break;
      }
      case 'POST /api/auth/passkeys/options':
      case 'DELETE /api/auth/sessions/{sessionID}':
        setBody({ password: (await this.main(role)).password });
        break;
      // A fresh account: ending every other session of the main one would cut the world's own.
      case 'POST /api/auth/sessions/end-others': {
        const account = await this.freshAccount(role);
        prepared.credentials = { headers: account.auth };
        setBody({ password: account.password });
        break;
      }
      case 'POST /api/auth/tokens':
        setBody({ password: (await this.main(role)).password });
        break;
      // A reset link an administrator made for a fresh account (the mailed one is the same link).
      case 'POST /api/auth/password-reset/confirm': {
        const account = await this.freshAccount(role);
        const made = await this.call(
          await this.main('admin'),
          'POST',
          `/api/auth/admin/${account.userId}/password-reset`,
        );
        const token = new URL((made.json() as { url: string }).url).searchParams.get('token')!;
        setBody({ token, new_password: `${GOOD_PASSWORD}-${proposal.pick}` });
        break;
      }
      // Without SMTP an address is 409 mail_unavailable; removing it (null) succeeds.
      case 'PUT /api/auth/owner/email': {
        const session = await this.main(role);
        setBody({ password: session.password, ...(proposal.pick % 2 === 0 ? { email: null } : {}) });
        break;
      }
      // A confirmation link as the mail would carry it (the world has no SMTP server): stored as the service stores it.
      case 'POST /api/auth/owner/email/confirm': {
        const account = await this.freshAccount(role);
        const token = randomBytes(32).toString('base64url');
        const now = new Date();
        await this.ctx.database.db
          .insertInto('account_links')
          .values({
            id: randomUUID(),
            user_id: account.userId,
            purpose: 'email_confirm',
            token_hash: createHash('sha256').update(token).digest('hex'),
            email: `${account.username}@example.test`,
            expires_at: new Date(now.getTime() + 60_000).toISOString(),
            used_at: null,
            created_at: now.toISOString(),
          })
          .execute();
        setBody({ token });
        break;
      }
      // An account that is not yet a member (each case shares with someone new).
      case 'POST /api/notes/{noteID}/members':
        setBody({ username: (await signup(this.ctx.app, uniqueName('member'))).username });
        break;
      case 'DELETE /api/auth/tokens/{id}': {
        const session = await this.main(role);
        const created = await this.call(session, 'POST', '/api/auth/tokens', {
          name: 'world',
          scopes: ['notes:read'],
          password: session.password,
        });
        request.pathParams.id = (created.json() as { id: string }).id;
        break;
      }
      // Teams (#41): a free username; an account without a password and its set-up link; an open invitation.
      case 'POST /api/auth/admin/users':
        setBody({ username: uniqueName('made') });
        break;
      case 'POST /api/auth/setup': {
        const made = await this.call(await this.main('admin'), 'POST', '/api/auth/admin/users', {
          username: uniqueName('setup'),
        });
        const token = new URL((made.json() as { setup_url: string }).setup_url).searchParams.get('token');
        setBody({ token, password: GOOD_PASSWORD });
        break;
      }
      case 'POST /api/auth/admin/{id}/setup-link': {
        const made = await this.call(await this.main('admin'), 'POST', '/api/auth/admin/users', {
          username: uniqueName('relink'),
        });
        if (role === 'admin') request.pathParams.id = (made.json() as { user: { id: string } }).user.id;
        break;
      }
      case 'DELETE /api/auth/admin/invitations/{id}': {
        const created = await this.call(await this.main('admin'), 'POST', '/api/auth/admin/invitations', {});
        request.pathParams.id = (created.json() as { id: string }).id;
        break;
      }
      case 'DELETE /api/auth/passkeys/{id}':
        request.pathParams.id = await this.newPasskey(await this.main(role));
        setBody({ password: (await this.main(role)).password });
        break;
      case 'POST /api/auth/passkey/login': {
        let authenticator = this.passkeys.get(role);
        if (authenticator === undefined) {
          authenticator = new SoftAuthenticator(this.ctx.config.publicUrl);
          await this.newPasskey(await this.main(role), authenticator);
          this.passkeys.set(role, authenticator);
        }
        const options = (await this.inject({ method: 'POST', url: '/api/auth/passkey/options' })).json() as {
          challenge: string;
        };
        setBody({ credential: authenticator.authenticate(options) });
        break;
      }
      default:
    }
  }
}

/**
 * The import rules that JSON Schema cannot state (the operation's description states them): within
 * a note, version numbers increase, times do not go backwards and `restored_from` names an earlier
 * version. Generated documents are put in that order; every other value stays as generated.
 */
function repairImport(document: unknown): unknown {
  const notes = (document as { notes?: unknown }).notes;
  if (!Array.isArray(notes)) return document;
  for (const note of notes as Array<Record<string, unknown>>) {
    if (typeof note !== 'object' || note === null || !Array.isArray(note.versions)) continue;
    note.versions.forEach((version: Record<string, unknown>, i) => {
      if (typeof version !== 'object' || version === null) return;
      version.version = i + 1;
      if (typeof note.created_at === 'string') version.created_at = note.created_at;
      if (typeof version.restored_from === 'number' && version.restored_from > i) version.restored_from = null;
    });
  }
  return document;
}
