// Access, refresh and CSRF tokens: entropy, storage as hashes only, malformed credentials, cookie-then-bearer.
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { nativePool } from '../src/db/pool.ts';
import { csrfTokenFor } from '../src/services/auth/csrf.ts';
import { issueSession } from '../src/services/auth/sessions.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const PROBLEM = { accept: 'application/problem+json' };

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' } });
});
afterAll(() => svc.close());

const me = (opts: { headers?: Record<string, string>; cookies?: Record<string, string> } = {}) =>
  svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { ...PROBLEM, ...opts.headers }, ...(opts.cookies ? { cookies: opts.cookies } : {}) });

const rows = (sql: string) => svc.db.orm.em.fork().getConnection().execute<Record<string, unknown>[]>(sql);

describe('token entropy', () => {
  const access: string[] = [];
  const refresh: string[] = [];
  const csrf: string[] = [];
  beforeAll(async () => {
    const user = await createUser(svc);
    const em = svc.deps.orm.em.fork();
    // 200 sessions the way login issues them (the per-user cap evicts old ones; the tokens are what count).
    for (let i = 0; i < 200; i++) {
      const issued = await em.transactional((tx) => issueSession({ em: tx, clock: svc.deps.clock, config: svc.deps.config }, user.id, { ip: '127.0.0.1', userAgent: null }));
      access.push(issued.accessToken);
      refresh.push(issued.refreshToken);
      csrf.push(csrfTokenFor(svc.deps.secret, issued));
    }
  });

  it('access tokens are at least 27 base64url characters (>= 160 bits)', () => {
    for (const t of access) expect(t).toMatch(/^[A-Za-z0-9_-]{27,}$/);
  });

  it('refresh tokens are at least 43 base64url characters (>= 256 bits); csrf tokens are 32 bytes base64url', () => {
    for (const t of refresh) expect(t).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    for (const t of csrf) expect(t).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('no two of the 600 tokens are equal, and no refresh or csrf token equals an access token', () => {
    expect(new Set([...access, ...refresh, ...csrf]).size).toBe(600);
  });

  it('uses the whole alphabet (a CSPRNG, not a hex or counter encoding)', () => {
    const seen = new Set(access.join(''));
    expect(seen.size).toBe(64);
  });
});

describe('the database holds only hashes', () => {
  it('no stored column equals a raw access, refresh or ws token; token_hash is their SHA-256', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const ticket = await user.caller.auth.wsTicket();
    const raw = [user.token, user.refreshToken, user.csrfToken, ticket.ticket];
    const tables = ['users', 'sessions', 'refresh_tokens', 'ws_tickets'];
    for (const table of tables) {
      for (const row of await rows(`select * from ${table}`)) {
        for (const value of Object.values(row)) for (const token of raw) expect(String(value)).not.toContain(token);
      }
    }
    const sha = (t: string) => createHash('sha256').update(t).digest('hex');
    const [session] = await rows(`select token_hash from sessions where id = '${user.sessionId}'`);
    expect(session?.token_hash).toBe(sha(user.token));
    const refreshRows = await rows(`select token_hash from refresh_tokens where session_id = '${user.sessionId}'`);
    expect(refreshRows.map((r) => r.token_hash)).toEqual([sha(user.refreshToken)]);
    const tickets = await rows(`select ticket_hash from ws_tickets where user_id = '${user.id}'`);
    expect(tickets.map((r) => r.ticket_hash)).toEqual([sha(ticket.ticket)]);
  });
});

describe('malformed credentials', () => {
  it.each([
    ['a scheme without a token', 'Bearer'],
    ['a scheme and a trailing space', 'Bearer '],
    ['two spaces before the token', 'Bearer  abcdefghijklmnopqrstuvwxyz0123456789'],
    ['another scheme', 'Basic YWxpY2U6c2VjcmV0'],
    ['an 8 KB token', `Bearer ${'a'.repeat(8192)}`],
    ['a token with characters outside base64url', 'Bearer abc.def/ghi+jkl=mnopqrstuvwxyz'],
    ['an unknown well-formed token', `Bearer ${'Q'.repeat(43)}`],
  ])('Authorization with %s is 401/1000, never 500', async (_name, authorization) => {
    const res = await me({ headers: { authorization } });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000, error_category: 'auth' });
  });

  it('a token containing a NUL byte is 401/1000', async () => {
    const user = await createUser(svc);
    const withNul = await me({ cookies: { session: `${user.token.slice(0, 20)}\u0000${user.token.slice(20)}` } });
    expect(withNul.json()).toMatchObject({ status: 401, error_code: 1000 });
    // Header values cannot carry a raw NUL over HTTP; the escaped form must fail the same way.
    const escaped = await me({ headers: { authorization: `Bearer ${user.token}%00` } });
    expect(escaped.json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it.each([
    ['an 8 KB cookie', 'a'.repeat(8192)],
    ['an empty cookie', ''],
    ['a cookie with spaces and quotes', '"abc def"'],
  ])('a session cookie with %s is 401/1000', async (_name, session) => {
    const res = await me({ cookies: { session } });
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });

  it('the envelope form carries the same 1000', async () => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization: 'Basic abc' } });
    expect(res.statusCode).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ data: null, success: false, error_detail: { error_code: 1000, title: 'Authentication Error' } });
  });

  it('a bearer token works the same as the cookie', async () => {
    const user = await createUser(svc, { role: 'board_member' });
    const viaBearer = await me({ headers: user.headers });
    const viaCookie = await me({ cookies: { session: user.token } });
    expect(viaBearer.statusCode).toBe(200);
    expect(viaBearer.json()).toEqual(viaCookie.json());
    expect(viaBearer.json().data).toMatchObject({ id: user.id, role: 'board_member' });
  });
});

describe('cookie, then bearer', () => {
  let alice: TestUser;
  let bob: TestUser;
  beforeAll(async () => {
    [alice, bob] = await Promise.all([createUser(svc), createUser(svc)]);
  });

  it('a valid cookie wins over a valid bearer', async () => {
    const res = await me({ cookies: { session: alice.token }, headers: bob.headers });
    expect(res.json().data.id).toBe(alice.id);
  });

  it('an unknown cookie falls back to a valid bearer', async () => {
    const res = await me({ cookies: { session: 'Z'.repeat(43) }, headers: bob.headers });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.id).toBe(bob.id);
  });

  it('a malformed cookie falls back to a valid bearer', async () => {
    const res = await me({ cookies: { session: 'not a token' }, headers: bob.headers });
    expect(res.json().data.id).toBe(bob.id);
  });

  it('a revoked cookie falls back to a valid bearer', async () => {
    const carol = await createUser(svc);
    await carol.caller.auth.revokeSession({ session_id: carol.sessionId });
    expect((await me({ cookies: { session: carol.token } })).json()).toMatchObject({ error_code: 1002 });
    const res = await me({ cookies: { session: carol.token }, headers: bob.headers });
    expect(res.json().data.id).toBe(bob.id);
  });

  it('an invalid cookie with an invalid bearer is 401', async () => {
    const res = await me({ cookies: { session: 'Z'.repeat(43) }, headers: { authorization: `Bearer ${'Y'.repeat(43)}` } });
    expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
  });
});

describe('unauthenticated requests', () => {
  // Every statement, through the ORM or its Kysely, takes a connection from this pool.
  const spyOnDatabase = async () => vi.spyOn(await nativePool(svc.deps.orm), 'connect');

  it('GET /auth/me without any credential is 401/1000 without a database call', async () => {
    const execute = await spyOnDatabase();
    try {
      const res = await me();
      expect(res.json()).toMatchObject({ status: 401, error_code: 1000 });
      expect(execute).not.toHaveBeenCalled();
      // The spy does see queries: an authenticated request makes one.
      const user = await createUser(svc);
      execute.mockClear();
      expect((await me({ headers: user.headers })).statusCode).toBe(200);
      expect(execute).toHaveBeenCalled();
    } finally {
      execute.mockRestore();
    }
  });

  it('a malformed credential is refused without a database call too', async () => {
    const execute = await spyOnDatabase();
    try {
      expect((await me({ headers: { authorization: `Bearer ${'a'.repeat(8192)}` } })).statusCode).toBe(401);
      expect(execute).not.toHaveBeenCalled();
    } finally {
      execute.mockRestore();
    }
  });
});
