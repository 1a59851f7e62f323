// CONTRACT §3.6: MFA_REQUIRED_ROLES — the gate after the password-change gate, its exceptions, keys and service accounts unaffected, the document.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { createServiceAccount, issueKey } from './helpers/apiKeys.ts';
import { enableMfa, manualClock, totpCode } from './helpers/mfa.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { operationsOf, urlOf, type DocumentedOperation } from './helpers/openapiOperations.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

const GATED = 'two-factor authentication required';
/** What a user of a required role reaches before two-factor authentication is on (logout needs no sign-in at all). */
const EXCEPTIONS = ['GET /auth/me', 'POST /auth/change-password', 'GET /auth/mfa', 'POST /auth/mfa/totp/enroll', 'POST /auth/mfa/totp/confirm', 'POST /auth/mfa/totp/disable', 'POST /auth/mfa/recovery-codes'];

describe('MFA_REQUIRED_ROLES', () => {
  it('is comma-separated roles, none by default; an unknown role stops the boot naming the variable', () => {
    expect(loadConfig({}).mfaRequiredRoles).toEqual([]);
    expect(loadConfig({ MFA_REQUIRED_ROLES: '' }).mfaRequiredRoles).toEqual([]);
    expect(loadConfig({ MFA_REQUIRED_ROLES: ' ceo, manager ,board_member,manager' }).mfaRequiredRoles).toEqual(['ceo', 'manager', 'board_member']);
    for (const bad of ['admin', 'ceo,,owner', 'CEO']) {
      expect(() => loadConfig({ MFA_REQUIRED_ROLES: bad }), bad).toThrow(ConfigError);
      expect(() => loadConfig({ MFA_REQUIRED_ROLES: bad }), bad).toThrow('MFA_REQUIRED_ROLES');
    }
  });
});

const clock = manualClock();
let svc: TestService;
let doc: OpenApiDocument;
let operations: DocumentedOperation[];
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', MFA_REQUIRED_ROLES: 'manager,board_member' }, clock });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  operations = operationsOf(doc);
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

const label = (op: DocumentedOperation) => `${op.method} ${op.path}`;

async function call(op: DocumentedOperation, headers: Record<string, string>, payload = '{}') {
  const url = urlOf(op);
  const res = await svc.app.inject({ method: op.method, url, headers: { 'content-type': 'application/json', ...headers }, ...(op.method === 'GET' ? {} : { payload }) });
  expectResponseConforms(doc, op.method, url, res);
  return res;
}
const detailOf = (res: { body: string }) => (res.body === '' ? undefined : (JSON.parse(res.body) as { error_detail?: { detail?: string } }).error_detail?.detail);
const get = (url: string, headers: Record<string, string>) => svc.app.inject({ method: 'GET', url: `/api/v1${url}`, headers });

describe('a signed-in user of a listed role without TOTP on', () => {
  it('gets the documented 403/1001 "two-factor authentication required" on every operation but the exceptions', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const signedIn = operations.filter((o) => o.authenticated);
    expect(signedIn.map(label)).toEqual(expect.arrayContaining(EXCEPTIONS));
    // Logout last: it ends the session it is given.
    for (const op of [...signedIn].sort((a, b) => Number(a.path === '/auth/logout') - Number(b.path === '/auth/logout'))) {
      const res = await call(op, manager.headers);
      const gated = res.statusCode === 403 && detailOf(res) === GATED;
      expect(gated, `${label(op)} answered ${res.statusCode}`).toBe(!EXCEPTIONS.includes(label(op)));
    }
  });

  it('also over tRPC: a query and the live events subscription', async () => {
    const manager = await createUser(svc, { role: 'board_member' });
    await expect(manager.caller.users.list({})).rejects.toMatchObject({ errorCode: 1001, detail: GATED });
    await expect(manager.caller.events.subscribe({ channels: ['approvals'] })).rejects.toMatchObject({ errorCode: 1001, detail: GATED });
    await expect(manager.caller.auth.me()).resolves.toMatchObject({ mfa_enabled: false });
  });

  it('reaches what the role allows once TOTP is on, at the next request', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    expect(detailOf(await get('/users', manager.headers))).toBe(GATED);
    await enableMfa(manager, clock);
    expect((await get('/users', manager.headers)).statusCode).toBe(200);
    expect((await manager.caller.auth.mfa.status()).required).toBe(true);
  });

  it('logout still works', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: manager.headers });
    expect(res.statusCode).toBe(204);
    expect((await get('/auth/me', manager.headers)).statusCode).toBe(401);
  });
});

describe('order and scope of the gate', () => {
  it('the password-change gate comes first with its own exceptions: /auth/mfa waits for the new password', async () => {
    const manager = await createUser(svc, { role: 'manager', mustChangePassword: true });
    for (const url of ['/users', '/auth/mfa']) expect(detailOf(await get(url, manager.headers)), url).toBe('password change required');
    await expect(manager.caller.auth.mfa.enroll()).rejects.toMatchObject({ errorCode: 1001, detail: 'password change required' });
    const changed = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/change-password',
      headers: { ...manager.headers, 'content-type': 'application/json' },
      payload: { current_password: manager.password, new_password: 'a brand new passphrase 42' },
    });
    expect(changed.statusCode).toBe(200);
    // The session rotated: its new access token is in the `session` cookie.
    const headers = { authorization: `Bearer ${changed.cookies.find((c) => c.name === 'session')?.value ?? ''}` };
    expect(detailOf(await get('/users', headers))).toBe(GATED);
    expect((await get('/auth/mfa', headers)).statusCode).toBe(200);
  });

  it('roles not listed are not affected, and GET /auth/mfa says which are', async () => {
    const observer = await createUser(svc, { role: 'observer' });
    expect((await get('/users', observer.headers)).statusCode).toBe(200);
    expect((await get('/users', ceo.headers)).statusCode).toBe(200);
    expect(await observer.caller.auth.mfa.status()).toEqual({ totp_enabled: false, recovery_codes_remaining: 0, required: false });
    const manager = await createUser(svc, { role: 'manager' });
    expect(await manager.caller.auth.mfa.status()).toEqual({ totp_enabled: false, recovery_codes_remaining: 0, required: true });
  });

  it('a change of role into a listed one applies at the next request', async () => {
    const user = await createUser(svc, { role: 'observer' });
    expect((await get('/users', user.headers)).statusCode).toBe(200);
    await ceo.caller.users.updateRole({ user_id: user.id, role: 'manager' });
    expect(detailOf(await get('/users', user.headers))).toBe(GATED);
  });

  it("a listed user's API keys are not affected", async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const key = await issueKey(svc, ceo, ['users:read'], { userId: manager.id });
    expect((await get('/users', key.headers)).statusCode).toBe(200);
    expect((await get('/auth/me', key.headers)).json().data).toMatchObject({ role: 'manager', mfa_enabled: false });
  });

  it('service accounts of a listed role act through their keys unaffected', async () => {
    const bot = await createServiceAccount(ceo, 'manager');
    const key = await issueKey(svc, ceo, ['users:read', 'approvals:write'], { userId: bot.id });
    expect((await get('/users', key.headers)).statusCode).toBe(200);
    const created = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/approvals',
      headers: { ...key.headers, 'content-type': 'application/json' },
      payload: { action_type: 'deploy:production', title: 't', description: 'd', risk_level: 'low' },
    });
    expect(created.statusCode).toBe(201);
  });

  it('turning TOTP off again closes the gate again', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const { secret } = await enableMfa(manager, clock);
    await manager.caller.auth.mfa.disable({ password: manager.password, code: totpCode(secret, clock.now()) });
    expect(detailOf(await get('/users', manager.headers))).toBe(GATED);
  });
});

describe('the document', () => {
  it('lists the 403 "two-factor authentication required" on every signed-in operation but the exceptions', () => {
    for (const op of operations.filter((o) => o.authenticated)) {
      const forbidden = JSON.stringify(op.responses['403'] ?? {});
      expect(forbidden.includes('two-factor authentication required'), label(op)).toBe(!EXCEPTIONS.includes(label(op)));
    }
  });
});
