// Seeds a running server over its public HTTP API, the way a client would.

export const BENCH_PASSWORD = 'Vellum-bench: correct horse battery staple 42!';

export interface ApiResponse {
  status: number;
  body: unknown;
  text: string;
  headers: Headers;
}

export function createApi(baseUrl: string) {
  async function call(
    method: string,
    path: string,
    options: { body?: unknown; token?: string } = {},
  ): Promise<ApiResponse> {
    const headers: Record<string, string> = {};
    if (options.body !== undefined) headers['content-type'] = 'application/json';
    if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
    const response = await fetch(baseUrl + path, {
      method,
      headers,
      ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await response.text();
    let body: unknown;
    try {
      body = text === '' ? undefined : JSON.parse(text);
    } catch {
      body = text;
    }
    return { status: response.status, body, text, headers: response.headers };
  }

  async function expect(
    status: number,
    method: string,
    path: string,
    options: { body?: unknown; token?: string } = {},
  ) {
    const response = await call(method, path, options);
    if (response.status !== status) {
      throw new Error(`${method} ${path}: expected ${status}, got ${response.status}: ${response.text.slice(0, 300)}`);
    }
    return response;
  }

  return {
    call,
    expect,
    async signup(username: string): Promise<void> {
      await expect(201, 'POST', '/api/auth/signup', { body: { username, password: BENCH_PASSWORD } });
    },
    async login(username: string): Promise<string> {
      const response = await expect(200, 'POST', '/api/auth/login', { body: { username, password: BENCH_PASSWORD } });
      return (response.body as { access_token: string }).access_token;
    },
    async createNote(token: string, title: string, content: string): Promise<string> {
      const response = await expect(201, 'POST', '/api/notes', { token, body: { title, content } });
      return (response.body as { id: string }).id;
    },
    async addVersion(token: string, noteId: string, title: string, content: string): Promise<void> {
      await expect(204, 'POST', `/api/notes/${noteId}/versions`, { token, body: { title, content } });
    },
  };
}

export type Api = ReturnType<typeof createApi>;

/** Runs `count` jobs with at most `width` in flight. */
export async function inParallel(width: number, count: number, job: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: Math.min(width, count) }, async () => {
    while (next < count) await job(next++);
  });
  await Promise.all(lanes);
}

/** ~`bytes` of plain prose, the size of a typical short note. */
export function prose(bytes: number, seed = 0): string {
  const words = ['vellum', 'notes', 'version', 'history', 'draft', 'ledger', 'quill', 'margin', 'folio', 'ink'];
  const out: string[] = [];
  let length = 0;
  for (let i = seed; length < bytes; i++) {
    const word = words[i % words.length]!;
    out.push(word);
    length += word.length + 1;
  }
  return out.join(' ').slice(0, bytes);
}
