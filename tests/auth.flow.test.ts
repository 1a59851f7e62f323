// End to end over HTTP: first-run setup, login, me, refresh and logout in one browser-like flow.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, type TestService } from './helpers/service.ts';

let svc: TestService;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMIT_STORE: 'memory' } });
});
afterAll(() => svc.close());

type Cookie = { name: string; value: string; path?: string; maxAge?: number; httpOnly?: boolean; secure?: boolean; sameSite?: string };
const jar = (cookies: Cookie[]) => Object.fromEntries(cookies.map((c) => [c.name, c.value]));

describe('first-run setup, login, me, refresh, logout', () => {
  it('works end to end over HTTP', async () => {
    const before = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'ceo', password: 'correct horse battery' } });
    expect(before.statusCode).toBe(409);

    const setup = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/setup', payload: { username: 'Ceo', password: 'correct horse battery' } });
    expect(setup.statusCode).toBe(201);
    const cookies = setup.cookies;
    expect(cookies.map((c) => c.name).sort()).toEqual(['csrf_token', 'refresh_token', 'session']);
    const body = setup.json().data;
    expect(body).toMatchObject({ session_id: expect.any(String), expires_in: 3600, must_change_password: false, user: { username: 'Ceo', role: 'ceo' } });

    const me = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', cookies: jar(cookies) });
    expect(me.statusCode).toBe(200);
    expect(me.json().data.username).toBe('Ceo');

    const login = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: 'ceo', password: 'correct horse battery' } });
    expect(login.statusCode).toBe(200);

    const refreshed = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: jar(cookies).refresh_token ?? '' } });
    expect(refreshed.statusCode).toBe(200);
    expect(refreshed.json().data.session_id).toBe(body.session_id);
    const old = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', cookies: jar(cookies) });
    expect(old.statusCode).toBe(401);
    expect(old.json().error_detail.error_code).toBe(1000);

    const fresh = jar(refreshed.cookies);
    const out = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', cookies: fresh });
    expect(out.statusCode).toBe(204);
    const after = await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', cookies: fresh });
    expect(after.statusCode).toBe(401);
    expect(after.json().error_detail.error_code).toBe(1002);
  });
});
