// CONTRACT §3.6: DELETE /users/{user_id}/mfa (users.resetMfa) — the CEO turns a user's two-factor authentication off (a lost phone).
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { auditRows } from './helpers/audit.ts';
import { PROBLEM } from './helpers/http.ts';
import { enableMfa, manualClock, totpCode } from './helpers/mfa.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const clock = manualClock();
let svc: TestService;
let doc: OpenApiDocument;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', RATE_LIMIT_STORE: 'memory' }, clock });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

async function reset(by: TestUser, userId: string, headers: Record<string, string> = {}) {
  const url = `/api/v1/users/${userId}/mfa`;
  const res = await svc.app.inject({ method: 'DELETE', url, headers: { ...by.headers, ...headers } });
  expectResponseConforms(doc, 'DELETE', url, res);
  return res;
}
const login = (username: string, password: string, otp?: string) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username, password, ...(otp === undefined ? {} : { otp }) } });
const db = () => kysely(svc.deps.orm.em.fork());
const rowsOf = async (userId: string) => ({
  totp: await db().selectFrom('user_totp').selectAll().where('userId', '=', userId).execute(),
  codes: await db().selectFrom('mfa_recovery_codes').selectAll().where('userId', '=', userId).execute(),
  user: await db().selectFrom('users').select(['mfaEnabled', 'updatedAt']).where('id', '=', userId).executeTakeFirst(),
});

describe('DELETE /users/{user_id}/mfa', () => {
  it('204: the user signs in with the password alone; key and recovery codes gone; sessions stay; a user.updated event and an mfa.reset entry', async () => {
    const user = await createUser(svc, { role: 'manager' });
    const { secret, recoveryCodes } = await enableMfa(user, clock);
    const res = await reset(ceo, user.id);
    expect(res.statusCode).toBe(204);
    expect(res.body).toBe('');
    expect((await login(user.username, user.password)).statusCode).toBe(200);
    expect(await rowsOf(user.id)).toMatchObject({ totp: [], codes: [], user: { mfaEnabled: false } });
    expect((await svc.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers })).json().data.mfa_enabled).toBe(false);
    const events = await db()
      .selectFrom('events')
      .select(['actor', 'data'])
      .where('type', '=', 'user.updated')
      .where(sql<string>`data->>'id'`, '=', user.id)
      .orderBy('rowId')
      .execute();
    expect(events.map((e) => [e.actor, e.data.mfa_enabled])).toEqual([
      [user.username, true],
      [ceo.username, false],
    ]);
    const entries = await auditRows(svc, { type: 'mfa.reset', targetId: user.id });
    expect(entries.map((e) => [e.actor, e.targetType, e.data])).toEqual([[ceo.username, 'user', { username: user.username }]]);
    // The old key and codes mean nothing now; the user may enroll again.
    const again = await user.caller.auth.mfa.enroll();
    expect(again.secret).not.toBe(secret);
    await expect(user.caller.auth.mfa.confirm({ code: totpCode(secret, clock.now()) })).rejects.toMatchObject({ errorCode: 2000 });
    await user.caller.auth.mfa.confirm({ code: totpCode(again.secret, clock.now()) });
    expect((await login(user.username, user.password, recoveryCodes[0])).json().error_detail.detail).toBe('invalid one-time code');
  });

  it('not on (never, or only pending): 409/4000 in both formats, nothing changed', async () => {
    const user = await createUser(svc);
    const off = await reset(ceo, user.id, PROBLEM);
    expect(off.statusCode).toBe(409);
    expect(off.json()).toMatchObject({ status: 409, error_code: 4000, detail: 'two-factor authentication is not on for this user' });
    await user.caller.auth.mfa.enroll();
    const before = await rowsOf(user.id);
    const pending = await reset(ceo, user.id);
    expect(pending.statusCode).toBe(409);
    expect(pending.json().error_detail.error_code).toBe(4000);
    expect(await rowsOf(user.id)).toEqual(before);
  });

  it('an unknown user: 404/3000', async () => {
    for (const id of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await reset(ceo, id);
      expect(res.statusCode, id).toBe(404);
      expect(res.json().error_detail.error_code, id).toBe(3000);
    }
  });

  it('anyone but the CEO: 403/1001, nothing changed', async () => {
    const user = await createUser(svc);
    await enableMfa(user, clock);
    for (const role of ['manager', 'board_member', 'observer'] as const) {
      const other = await createUser(svc, { role });
      const res = await reset(other, user.id);
      expect(res.statusCode, role).toBe(403);
      expect(res.json().error_detail.error_code, role).toBe(1001);
    }
    expect((await rowsOf(user.id)).user?.mfaEnabled).toBe(true);
  });

  it("changes the ETag of GET /users/{id}; the CEO's own works too", async () => {
    const boss = await createUser(svc, { role: 'manager' });
    await enableMfa(boss, clock);
    const etag = (await svc.app.inject({ method: 'GET', url: `/api/v1/users/${boss.id}`, headers: ceo.headers })).headers.etag;
    clock.advance(1);
    expect((await reset(ceo, boss.id)).statusCode).toBe(204);
    expect((await svc.app.inject({ method: 'GET', url: `/api/v1/users/${boss.id}`, headers: ceo.headers })).headers.etag).not.toBe(etag);
    await enableMfa(ceo, clock);
    expect((await reset(ceo, ceo.id)).statusCode).toBe(204);
  });

  it('a deleted user takes their key and recovery codes along', async () => {
    const user = await createUser(svc);
    await enableMfa(user, clock);
    await ceo.caller.users.delete({ user_id: user.id });
    expect(await rowsOf(user.id)).toEqual({ totp: [], codes: [], user: undefined });
  });
});
