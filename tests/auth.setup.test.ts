// POST /auth/setup: the CEO's first-run setup, its cookies, its validation and its one-winner race.
import type { OutgoingHttpHeaders } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';

const PASSWORD = 'correct horse battery staple';
const PROBLEM = { accept: 'application/problem+json' };

type SetCookie = { value: string; attrs: Record<string, string | true> };

/** The raw Set-Cookie lines by cookie name, attributes keyed in lower case (so nothing extra can hide). */
function setCookies(headers: OutgoingHttpHeaders): Map<string, SetCookie> {
  const raw = headers['set-cookie'];
  const lines = Array.isArray(raw) ? raw : typeof raw === 'string' ? [raw] : [];
  const out = new Map<string, SetCookie>();
  for (const line of lines) {
    const [pair = '', ...parts] = line.split(';').map((s) => s.trim());
    const attrs: Record<string, string | true> = {};
    for (const part of parts) {
      const eq = part.indexOf('=');
      attrs[(eq < 0 ? part : part.slice(0, eq)).toLowerCase()] = eq < 0 ? true : part.slice(eq + 1);
    }
    out.set(pair.slice(0, pair.indexOf('=')), { value: pair.slice(pair.indexOf('=') + 1), attrs });
  }
  return out;
}

// The per-IP window of auth.setup (10/min) is the rate limiter's rule, not what these tests are about.
const ENV = { RATE_LIMIT_STORE: 'memory', RATE_LIMITS_ENABLED: 'false' };

const setupOn = (svc: TestService, payload: unknown, headers: Record<string, string> = {}) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: JSON.stringify(payload), headers: { 'content-type': 'application/json', ...headers } });

describe('POST /auth/setup on a fresh database', () => {
  // Policy errors are only reachable before setup is done: these tests share a database that never gets a CEO.
  describe('invalid bodies', () => {
    let svc: TestService;
    beforeAll(async () => {
      svc = await startTestService({ env: ENV });
    });
    afterAll(() => svc.close());
    const setup = (payload: unknown, headers: Record<string, string> = {}) => setupOn(svc, payload, headers);

    it.each([
      ['a missing password', { username: 'ceo' }],
      ['a missing username', { password: PASSWORD }],
      ['an unknown field', { username: 'ceo', password: PASSWORD, role: 'ceo' }],
      ['a non-object body', ['ceo', PASSWORD]],
      ['a number as username', { username: 42, password: PASSWORD }],
    ])('%s is 400/2001 in the envelope', async (_name, payload) => {
      const res = await setup(payload);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      const body = res.json();
      expect(body).toMatchObject({ data: null, success: false, error_detail: { error_code: 2001, error_category: 'validation' } });
      expect(body.error).toBe(body.error_detail.detail);
    });

    it('is a bare ProblemDetail with status when Accept asks for problem+json', async () => {
      const res = await setup({ username: 'ceo' }, PROBLEM);
      expect(res.statusCode).toBe(400);
      expect(res.headers['content-type']).toBe('application/problem+json');
      expect(res.json()).toMatchObject({ status: 400, error_code: 2001, title: 'Validation Error' });
      expect(res.json().detail).toContain('body.password');
    });

    it.each([
      ['a control character', 'ce\u0007o'],
      ['a newline', 'ce\no'],
      ['a C1 control character', 'ce\u0085o'],
      ['a lone surrogate', 'ce\uD800o'],
      ['129 characters', 'a'.repeat(129)],
      ['only whitespace', '   '],
    ])('a username with %s is 400/2001', async (_name, username) => {
      const res = await setup({ username, password: PASSWORD }, PROBLEM);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2001 });
      expect(res.json().detail).toMatch(/^body\.username: /);
    });

    it('a password of 11 characters is 400/2001', async () => {
      const res = await setup({ username: 'ceo', password: 'a'.repeat(11) }, PROBLEM);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2001, detail: 'body.password: too short (min 12)' });
    });

    it('a password of 129 characters is 400/2001', async () => {
      const res = await setup({ username: 'ceo', password: 'a'.repeat(129) }, PROBLEM);
      expect(res.json()).toMatchObject({ status: 400, error_code: 2001 });
    });

    it('a whitespace-only password is 400/2000', async () => {
      const res = await setup({ username: 'ceo', password: ' '.repeat(12) }, PROBLEM);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2000, detail: 'password must not be only whitespace' });
    });

    it('a password equal to the username (ignoring case) is 400/2000, in both formats', async () => {
      const problem = await setup({ username: 'Chief.Executive', password: 'chief.EXECUTIVE' }, PROBLEM);
      expect(problem.statusCode).toBe(400);
      expect(problem.json()).toMatchObject({ status: 400, error_code: 2000, detail: 'password must not equal the username' });
      const envelope = await setup({ username: 'Chief.Executive', password: 'chief.EXECUTIVE' });
      expect(envelope.json()).toMatchObject({ success: false, error: 'password must not equal the username', error_detail: { error_code: 2000 } });
    });

    it('none of the refused attempts created a CEO', async () => {
      const status = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'ceo', password: PASSWORD } });
      expect(status.statusCode).toBe(409);
    });
  });

  describe('success', () => {
    let svc: TestService;
    let res: Awaited<ReturnType<typeof setupOn>>;
    beforeAll(async () => {
      svc = await startTestService({ env: ENV });
      // Surrounding spaces and a decomposed "é": stored trimmed and NFC-normalised.
      res = await setup({ username: '  Rene\u0301 Ceo ', password: PASSWORD });
    });
    afterAll(() => svc.close());
    const setup = (payload: unknown, headers: Record<string, string> = {}) => setupOn(svc, payload, headers);

    it('answers 201 with a CookieSessionResponse for the new CEO', () => {
      expect(res.statusCode).toBe(201);
      expect(res.json()).toEqual({
        data: {
          session_id: expect.any(String),
          expires_in: 3600,
          refresh_expires_in: 604800,
          must_change_password: false,
          user: { id: expect.any(String), username: 'René Ceo', role: 'ceo', kind: 'human', must_change_password: false, mfa_enabled: false, org_roles: [], scoped_departments: [] },
        },
        error: null,
        error_detail: null,
        success: true,
      });
    });

    it('sets the session cookie: HttpOnly, SameSite=Strict, Path=/api, Secure, Max-Age=3600', () => {
      const session = setCookies(res.headers).get('session');
      expect(session?.value).toMatch(/^[A-Za-z0-9_-]{27,}$/);
      expect(session?.attrs).toEqual({ httponly: true, samesite: 'Strict', path: '/api', secure: true, 'max-age': '3600' });
    });

    it('sets the csrf_token cookie readable by scripts: not HttpOnly, Path=/', () => {
      const csrf = setCookies(res.headers).get('csrf_token');
      expect(csrf?.value).toMatch(/^[A-Za-z0-9_-]{43}$/);
      expect(csrf?.attrs).toEqual({ samesite: 'Strict', path: '/', secure: true, 'max-age': '3600' });
    });

    it('sets the refresh_token cookie: HttpOnly, Path=/api (rev. 2), Max-Age=604800', () => {
      const refresh = setCookies(res.headers).get('refresh_token');
      expect(refresh?.value).toMatch(/^[A-Za-z0-9_-]{43,}$/);
      expect(refresh?.attrs).toEqual({ httponly: true, samesite: 'Strict', path: '/api', secure: true, 'max-age': '604800' });
    });

    it('never puts a token in the response body', () => {
      for (const { value } of setCookies(res.headers).values()) expect(res.body).not.toContain(value);
    });

    it('signs the CEO in: the session cookie authenticates GET /auth/me', async () => {
      const me = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', cookies: { session: setCookies(res.headers).get('session')?.value ?? '' } });
      expect(me.statusCode).toBe(200);
      expect(me.json().data).toMatchObject({ username: 'René Ceo', role: 'ceo' });
    });

    it('is 409/4000 once a CEO exists, in both formats', async () => {
      const envelope = await setup({ username: 'another', password: PASSWORD });
      expect(envelope.statusCode).toBe(409);
      expect(envelope.json()).toMatchObject({ success: false, error_detail: { error_code: 4000, error_category: 'conflict', title: 'Resource Conflict' } });
      const problem = await setup({ username: 'another', password: PASSWORD }, PROBLEM);
      expect(problem.statusCode).toBe(409);
      expect(problem.headers['content-type']).toBe('application/problem+json');
      expect(problem.json()).toMatchObject({ status: 409, error_code: 4000 });
      expect(problem.headers['set-cookie']).toBeUndefined();
    });

    it('is 409/4000 for the existing username too (the CEO is what exists, not the name)', async () => {
      const res2 = await setup({ username: 'rené ceo', password: PASSWORD }, PROBLEM);
      expect(res2.json()).toMatchObject({ status: 409, error_code: 4000 });
    });
  });
});

describe('concurrent first-run setups', () => {
  const race = async (username: (i: number) => string) => {
    const svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' } });
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          svc.app.inject({
            method: 'POST',
            url: '/api/v1/auth/setup',
            payload: { username: username(i), password: PASSWORD },
            // Distinct clients, so the per-IP in-flight cap cannot be what refuses them.
            remoteAddress: `10.0.0.${i + 1}`,
            headers: PROBLEM,
          }),
        ),
      );
      const [{ n }] = await svc.db.orm.em.fork().getConnection().execute<[{ n: string }]>(`select count(*) as n from users where role = 'ceo'`);
      return { results, ceos: Number(n) };
    } finally {
      await svc.close();
    }
  };

  it('ten setups with different usernames: exactly one 201, nine 409/4000', async () => {
    const { results, ceos } = await race((i) => `ceo-${i}`);
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    const losers = results.filter((r) => r.statusCode !== 201);
    expect(losers.map((r) => [r.statusCode, r.json<{ error_code: number }>().error_code])).toEqual(Array.from({ length: 9 }, () => [409, 4000]));
    expect(ceos).toBe(1);
  });

  it('ten setups with the same username: exactly one 201, nine 409/4000', async () => {
    const { results, ceos } = await race(() => 'the-ceo');
    expect(results.filter((r) => r.statusCode === 201)).toHaveLength(1);
    const losers = results.filter((r) => r.statusCode !== 201);
    expect(losers.map((r) => [r.statusCode, r.json<{ error_code: number }>().error_code])).toEqual(Array.from({ length: 9 }, () => [409, 4000]));
    expect(ceos).toBe(1);
  });
});
