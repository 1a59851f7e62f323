// CONTRACT §4.13: what the audit log records, with whom, from where and in which transaction; what it never holds.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listUsers, resetPassword, revokeApiKeys, revokeSessions } from '../src/admin/commands.ts';
import { loadConfig } from '../src/config.ts';
import { AUDIT_ONLY_DEFINITIONS } from '../src/contracts/audit.ts';
import { EVENT_DEFINITIONS } from '../src/contracts/events.ts';
import { kysely } from '../src/db/kysely.ts';
import { recordEvent } from '../src/events/record.ts';
import { appRouter } from '../src/routers/index.ts';
import { routeTable } from '../src/rest/routeTable.ts';
import { expireOverdueApprovals } from '../src/services/approvals/expiry.ts';
import { withOrigin } from '../src/services/audit/origin.ts';
import { login } from '../src/services/auth/auth.ts';
import { sha256 } from '../src/services/auth/tokens.ts';
import { PURGE_TASKS, runHousekeeping } from '../src/services/housekeeping/housekeeping.ts';
import { auditCount, auditRows } from './helpers/audit.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  // One proxy hop in front: the client address is the one X-Forwarded-For names.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', TRUST_PROXY: '1' } });
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

const requestId = () => `audit-${randomBytes(6).toString('hex')}`;
const PASSWORD = 'a long enough password';
const APPROVAL = { action_type: 'deploy:production', title: 'Ship it', description: 'Release 1.2', risk_level: 'high' } as const;

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';
/** A request through a proxy that reports `ip` as the client, with its own request id. */
function call(method: Method, url: string, opts: { headers?: Record<string, string>; body?: unknown; ip?: string; id?: string } = {}) {
  return svc.app.inject({
    method,
    url: `/api/v1${url}`,
    headers: {
      'x-forwarded-for': opts.ip ?? '203.0.113.9',
      'x-request-id': opts.id ?? requestId(),
      ...opts.headers,
      ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(opts.body === undefined ? {} : { payload: JSON.stringify(opts.body) }),
  });
}

describe('entries of live events', () => {
  it('an approval and its decision are recorded with actor, actor type, client IP (after TRUST_PROXY), request id and target', async () => {
    const writer = await createUser(svc, { role: 'manager' });
    const createId = requestId();
    const created = await call('POST', '/approvals', { headers: writer.headers, body: APPROVAL, ip: '198.51.100.7', id: createId });
    expect(created.statusCode).toBe(201);
    const approval = created.json().data as { id: string };
    const decideId = requestId();
    const approved = await call('POST', `/approvals/${approval.id}/approve`, { headers: ceo.headers, body: { comment: 'go' }, ip: '203.0.113.20', id: decideId });
    expect(approved.statusCode).toBe(200);

    const [createdEntry] = await auditRows(svc, { requestId: createId });
    expect(createdEntry).toMatchObject({
      type: 'approval.created',
      actor: writer.username,
      actorType: 'user',
      apiKeyId: null,
      ipAddress: '198.51.100.7',
      requestId: createId,
      targetType: 'approval',
      targetId: approval.id,
      data: created.json().data,
    });
    const [decision] = await auditRows(svc, { requestId: decideId });
    expect(decision).toMatchObject({ type: 'approval.approved', actor: ceo.username, actorType: 'user', ipAddress: '203.0.113.20', targetId: approval.id, data: approved.json().data });
  });

  it('every live event has its audit entry: same type, time, actor and data (one recorder for both)', async () => {
    const target = await createUser(svc, { role: 'observer' });
    const marker = requestId();
    expect((await call('PATCH', `/users/${target.id}`, { headers: ceo.headers, body: { role: 'manager' }, id: marker })).statusCode).toBe(200);
    expect((await call('DELETE', `/users/${target.id}`, { headers: ceo.headers, id: marker })).statusCode).toBe(204);

    const db = kysely(svc.deps.orm.em.fork());
    const events = await db.selectFrom('events').select(['type', 'occurredAt', 'actor', 'data']).orderBy('rowId').execute();
    const eventTypes = new Set<string>(EVENT_DEFINITIONS.map((d) => d.type));
    const entries = (await auditRows(svc)).filter((e) => eventTypes.has(e.type));
    const key = (r: { type: string; occurredAt: Date; actor: string | null; data: unknown }) => JSON.stringify([r.type, r.occurredAt.toISOString(), r.actor, r.data]);
    expect(entries.map(key).sort()).toEqual(events.map(key).sort());
    // The deletion ended the user's session: a session.revoked, recorded like any other event.
    const ended = await auditRows(svc, { requestId: marker, type: 'session.revoked' });
    expect(ended).toEqual([expect.objectContaining({ actor: ceo.username, targetType: 'session', targetId: target.sessionId, data: { session_id: target.sessionId, reason: 'user_deleted' } })]);
  });

  it('an entry exists only if its change committed: a transaction that fails after recording leaves none', async () => {
    const before = await auditCount(svc);
    const em = svc.deps.orm.em.fork();
    await expect(
      em.transactional(async (tx) => {
        await recordEvent(tx, { type: 'admin.list-users', actor: null, target: null, data: { users: 1, operator: 'test' } });
        throw new Error('the change fails after its entry was written');
      }),
    ).rejects.toThrow('the change fails');
    // A refused change (a decision on an approval that is not pending) records nothing either.
    const writer = await createUser(svc, { role: 'manager' });
    const approval = (await call('POST', '/approvals', { headers: writer.headers, body: APPROVAL })).json().data as { id: string };
    expect((await call('POST', `/approvals/${approval.id}/reject`, { headers: ceo.headers, body: { reason: 'no' } })).statusCode).toBe(200);
    const afterCreate = await auditCount(svc);
    expect((await call('POST', `/approvals/${approval.id}/approve`, { headers: ceo.headers, body: { comment: null } })).statusCode).toBe(409);
    expect(await auditCount(svc)).toBe(afterCreate);
    expect(afterCreate).toBe(before + 2);
  });

  it('an approval that expires is the system’s change, whichever request noticed it', async () => {
    const writer = await createUser(svc, { role: 'manager' });
    const approval = (await call('POST', '/approvals', { headers: writer.headers, body: { ...APPROVAL, ttl_seconds: 60 } })).json().data as { id: string };
    // As if a user's request met it after its deadline.
    const noticing = { actorType: 'user', apiKeyId: null, ip: '203.0.113.50', requestId: 'the-read-that-noticed' } as const;
    await withOrigin(noticing, () => expireOverdueApprovals(svc.deps.orm.em.fork(), new Date(Date.now() + 120_000), [approval.id]));
    const [expired] = await auditRows(svc, { type: 'approval.expired', targetId: approval.id });
    expect(expired).toMatchObject({ actor: null, actorType: 'system', ipAddress: null, requestId: null, apiKeyId: null });
  });
});

describe('sign-in, sign-out and passwords', () => {
  it('first-run setup records auth.setup (and user.created) for the new CEO, from the client’s address', async () => {
    const fresh = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', TRUST_PROXY: '1' } });
    try {
      const id = requestId();
      const res = await fresh.app.inject({
        method: 'POST',
        url: '/api/v1/auth/setup',
        headers: { 'x-forwarded-for': '192.0.2.44', 'x-request-id': id },
        payload: { username: 'founder', password: PASSWORD },
      });
      expect(res.statusCode).toBe(201);
      const body = res.json().data as { session_id: string; user: { id: string } };
      const entries = await auditRows(fresh, { requestId: id });
      expect(entries.map((e) => e.type).sort()).toEqual(['auth.setup', 'user.created']);
      expect(entries.find((e) => e.type === 'auth.setup')).toMatchObject({
        actor: 'founder',
        actorType: 'user',
        ipAddress: '192.0.2.44',
        targetType: 'user',
        targetId: body.user.id,
        data: { user_id: body.user.id, username: 'founder', session_id: body.session_id },
      });
    } finally {
      await fresh.close();
    }
  });

  it('a login records auth.login_succeeded with its session and user agent', async () => {
    const user = await createUser(svc, { password: PASSWORD });
    const id = requestId();
    const res = await call('POST', '/auth/login', { body: { username: user.username, password: PASSWORD }, headers: { 'user-agent': 'audit-agent/1.0' }, ip: '198.51.100.30', id });
    expect(res.statusCode).toBe(200);
    const [entry] = await auditRows(svc, { requestId: id });
    expect(entry).toMatchObject({
      type: 'auth.login_succeeded',
      actor: user.username,
      actorType: 'user',
      ipAddress: '198.51.100.30',
      targetType: 'user',
      targetId: user.id,
      data: { session_id: res.json().data.session_id, user_agent: 'audit-agent/1.0' },
    });
  });

  it('a failed login is recorded although the request fails: no actor, the username as sent, why, and never the password', async () => {
    const user = await createUser(svc, { password: PASSWORD });
    const unknown = `nobody_${randomBytes(3).toString('hex')}`;
    const cases = [
      { username: user.username, reason: 'wrong_password', targetId: user.id },
      { username: unknown, reason: 'unknown_user', targetId: null },
    ];
    for (const attempt of cases) {
      const id = requestId();
      const wrong = `wrong-${randomBytes(8).toString('hex')}`;
      const res = await call('POST', '/auth/login', { body: { username: attempt.username, password: wrong }, ip: '198.51.100.66', id });
      expect(res.statusCode).toBe(401);
      const entries = await auditRows(svc, { requestId: id });
      expect(entries).toEqual([
        expect.objectContaining({
          type: 'auth.login_failed',
          actor: null,
          actorType: 'user',
          ipAddress: '198.51.100.66',
          targetId: attempt.targetId,
          data: { username: attempt.username, reason: attempt.reason, user_agent: 'lightMyRequest' },
        }),
      ]);
      expect(JSON.stringify(entries)).not.toContain(wrong);
    }
  });

  it('a failed login keeps at most 128 characters of the username', async () => {
    const long = 'x'.repeat(200);
    const { orm, clock, config, secret, setupLatch, loginThrottle } = svc.deps;
    const id = requestId();
    await expect(
      withOrigin({ actorType: 'user', apiKeyId: null, ip: '192.0.2.1', requestId: id }, () =>
        login({ em: orm.em.fork(), clock, config, secret, setupLatch, loginThrottle }, { username: long, password: PASSWORD, client: { ip: '192.0.2.1', userAgent: null } }),
      ),
    ).rejects.toMatchObject({ status: 401 });
    const [entry] = await auditRows(svc, { requestId: id });
    expect(entry?.data).toMatchObject({ username: 'x'.repeat(128) });
  });

  it('logout records auth.logout beside the session.revoked of the session it ended', async () => {
    const user = await createUser(svc);
    const id = requestId();
    expect((await call('POST', '/auth/logout', { headers: user.headers, id })).statusCode).toBe(204);
    const entries = await auditRows(svc, { requestId: id });
    expect(entries.map((e) => [e.type, e.actor, e.targetId])).toEqual([
      ['session.revoked', user.username, user.sessionId],
      ['auth.logout', user.username, user.sessionId],
    ]);
    // A second logout with the same token ends nothing and records nothing.
    const again = requestId();
    expect((await call('POST', '/auth/logout', { headers: user.headers, id: again })).statusCode).toBe(204);
    expect(await auditRows(svc, { requestId: again })).toEqual([]);
  });

  it('a password change records auth.password_changed with the sessions it ended, never a password', async () => {
    const user = await createUser(svc, { password: PASSWORD });
    // A second session of the same user, which the change ends.
    expect((await call('POST', '/auth/login', { body: { username: user.username, password: PASSWORD } })).statusCode).toBe(200);
    const id = requestId();
    const next = `new-${randomBytes(10).toString('hex')}`;
    const res = await call('POST', '/auth/change-password', { headers: user.headers, body: { current_password: PASSWORD, new_password: next }, id });
    expect(res.statusCode).toBe(200);
    const entries = await auditRows(svc, { requestId: id, type: 'auth.password_changed' });
    expect(entries).toEqual([expect.objectContaining({ actor: user.username, targetType: 'user', targetId: user.id, data: { sessions_revoked: 1 } })]);
    expect(JSON.stringify(await auditRows(svc, { requestId: id }))).not.toContain(next);
  });
});

describe('API keys', () => {
  it('a request made with a key is recorded as api_key, with the key id; issuing and revoking it are recorded, its secret never', async () => {
    const owner = await createUser(svc, { role: 'manager' });
    const issueId = requestId();
    const issued = await call('POST', '/api-keys', { headers: owner.headers, body: { name: 'ci bot', scopes: ['approvals:write'] }, id: issueId });
    expect(issued.statusCode).toBe(201);
    const key = issued.json().data as { id: string; secret: string; prefix: string };
    const [created] = await auditRows(svc, { requestId: issueId });
    expect(created).toMatchObject({
      type: 'api_key.created',
      actor: owner.username,
      actorType: 'user',
      targetType: 'api_key',
      targetId: key.id,
      data: { name: 'ci bot', prefix: key.prefix, user_id: owner.id, username: owner.username, scopes: ['approvals:write'], expires_at: null },
    });

    const useId = requestId();
    const made = await call('POST', '/approvals', { headers: { authorization: `Bearer ${key.secret}` }, body: APPROVAL, id: useId, ip: '198.51.100.99' });
    expect(made.statusCode).toBe(201);
    const [byKey] = await auditRows(svc, { requestId: useId });
    expect(byKey).toMatchObject({ type: 'approval.created', actor: owner.username, actorType: 'api_key', apiKeyId: key.id, ipAddress: '198.51.100.99' });

    const revokeId = requestId();
    expect((await call('DELETE', `/api-keys/${key.id}`, { headers: owner.headers, id: revokeId })).statusCode).toBe(204);
    const [revoked] = await auditRows(svc, { requestId: revokeId });
    expect(revoked).toMatchObject({ type: 'api_key.revoked', actor: owner.username, targetId: key.id, data: { name: 'ci bot', prefix: key.prefix, user_id: owner.id } });
    // Revoking it again changes nothing and records nothing.
    const again = requestId();
    expect((await call('DELETE', `/api-keys/${key.id}`, { headers: owner.headers, id: again })).statusCode).toBe(204);
    expect(await auditRows(svc, { requestId: again })).toEqual([]);

    const stored = JSON.stringify(await auditRows(svc, { targetId: key.id }));
    expect(stored).not.toContain(key.secret);
    expect(stored).not.toContain(sha256(key.secret));
  });
});

describe('operators', () => {
  it('each admin command is recorded as admin.<command> with actor type admin, and so is every change it causes', async () => {
    const user = await createUser(svc, { role: 'manager', password: PASSWORD });
    const env = { em: svc.deps.orm.em.fork(), clock: svc.deps.clock };
    const reset = await resetPassword(env, user.username);
    const entries = await auditRows(svc, { targetId: user.id });
    const byType = Map.groupBy(entries, (e) => e.type);
    expect(byType.get('admin.reset-password')).toEqual([
      expect.objectContaining({ actor: null, actorType: 'admin', ipAddress: null, requestId: null, data: expect.objectContaining({ username: user.username, sessions_revoked: 1 }) }),
    ]);
    expect(byType.get('user.updated')?.map((e) => e.actorType)).toEqual(['admin']);
    const ended = await auditRows(svc, { targetId: user.sessionId });
    expect(ended.map((e) => [e.type, e.actorType])).toEqual([['session.revoked', 'admin']]);
    expect(JSON.stringify(entries)).not.toContain(reset.password);

    await revokeSessions(env, user.username);
    await revokeApiKeys(env, user.username);
    await listUsers(env);
    const types = (await auditRows(svc)).filter((e) => e.actorType === 'admin').map((e) => e.type);
    expect(types).toEqual(expect.arrayContaining(['admin.reset-password', 'admin.revoke-sessions', 'admin.revoke-api-keys', 'admin.list-users']));
    const [operator] = (await auditRows(svc, { type: 'admin.list-users' })).map((e) => e.data.operator);
    expect(typeof operator === 'string' && operator.length > 0).toBe(true);
  });
});

describe('what is never recorded', () => {
  /** Field names that would hold what must never be kept. */
  const FORBIDDEN = /password|token|secret|hash|otp|one_time|^key$|recovery/i;

  function keysOf(schema: unknown, seen = new Set<unknown>()): string[] {
    if (typeof schema !== 'object' || schema === null || seen.has(schema)) return [];
    seen.add(schema);
    const shape = 'shape' in schema && typeof schema.shape === 'object' && schema.shape !== null ? schema.shape : {};
    return Object.entries(shape).flatMap(([name, field]) => [name, ...keysOf(field, seen)]);
  }

  // A flag saying whether a password must change, not a password.
  const ALLOWED = new Set(['must_change_password']);

  it('no entry type’s data has a field for a password, token, key, secret, hash or one-time code', () => {
    const fields = [...AUDIT_ONLY_DEFINITIONS, ...EVENT_DEFINITIONS].flatMap((d) => keysOf(d.data).map((field) => ({ type: d.type, field })));
    expect(fields.length).toBeGreaterThan(20);
    expect(fields.filter(({ field }) => FORBIDDEN.test(field) && !ALLOWED.has(field))).toEqual([]);
  });

  it('after sign-ins, password changes, refreshes and keys, no secret appears anywhere in the log', async () => {
    const user = await createUser(svc, { role: 'manager', password: PASSWORD });
    const login = await call('POST', '/auth/login', { body: { username: user.username, password: PASSWORD } });
    const cookies = Object.fromEntries(login.cookies.map((c) => [c.name, c.value]));
    await call('POST', '/auth/login', { body: { username: user.username, password: 'not the password at all' } });
    const key = (await call('POST', '/api-keys', { headers: user.headers, body: { name: 'k', scopes: ['approvals:read'] } })).json().data as { secret: string };
    expect((await call('GET', '/approvals', { headers: { authorization: `Bearer ${key.secret}` } })).statusCode).toBe(200);
    const refreshed = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: cookies.refresh_token ?? '' } });
    expect(refreshed.statusCode).toBe(200);
    const next = `fresh-${randomBytes(10).toString('hex')}`;
    expect((await call('POST', '/auth/change-password', { headers: user.headers, body: { current_password: PASSWORD, new_password: next } })).statusCode).toBe(200);
    const stored = await kysely(svc.deps.orm.em.fork()).selectFrom('users').select('passwordHash').where('id', '=', user.id).executeTakeFirstOrThrow();

    const everything = JSON.stringify(await auditRows(svc));
    const secrets = [
      PASSWORD,
      next,
      'not the password at all',
      user.token,
      user.refreshToken,
      user.csrfToken,
      sha256(user.token),
      ...Object.values(cookies),
      ...refreshed.cookies.map((c) => c.value),
      key.secret,
      sha256(key.secret),
      stored.passwordHash ?? 'no hash',
    ].filter((s) => s.length >= 12);
    expect(secrets.length).toBeGreaterThan(8);
    for (const secret of secrets) expect(everything).not.toContain(secret);
  });
});

describe('append-only', () => {
  it('the database refuses to change an entry', async () => {
    await createUser(svc).then((u) => call('POST', '/auth/logout', { headers: u.headers }));
    const [entry] = await auditRows(svc);
    await expect(kysely(svc.deps.orm.em.fork()).updateTable('audit_entries').set({ actor: 'someone else' }).where('id', '=', entry?.id ?? 0).execute()).rejects.toThrow(
      /audit entries are never changed/,
    );
  });

  it('no operation edits or deletes entries: the audit area only reads', () => {
    const audit = routeTable.filter((r) => r.openapiPath.startsWith('/audit'));
    expect(audit.map((r) => `${r.method} ${r.openapiPath}`).sort()).toEqual(['GET /audit', 'GET /audit/export']);
    expect(Object.keys(appRouter._def.procedures).filter((p) => p.startsWith('audit.'))).toEqual(['audit.list']);
  });
});

describe('retention (AUDIT_RETENTION_DAYS)', () => {
  it('is 365 days unless set, 1..36500', () => {
    expect(loadConfig({}).auditRetentionDays).toBe(365);
    expect(loadConfig({ AUDIT_RETENTION_DAYS: '30' }).auditRetentionDays).toBe(30);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: '0' })).toThrow(/AUDIT_RETENTION_DAYS/);
    expect(() => loadConfig({ AUDIT_RETENTION_DAYS: '36501' })).toThrow(/AUDIT_RETENTION_DAYS/);
  });

  it('housekeeping deletes the entries older than the retention and keeps the others, whatever the events’ retention', async () => {
    const days = svc.deps.config.auditRetentionDays;
    const now = Date.now();
    const day = 24 * 3600 * 1000;
    const marker = requestId();
    const em = svc.deps.orm.em.fork();
    await withOrigin({ actorType: 'user', apiKeyId: null, ip: null, requestId: marker }, () =>
      em.transactional(async (tx) => {
        for (const age of [days + 2, days + 1, days - 1, 1]) {
          await recordEvent(tx, { type: 'admin.list-users', actor: null, target: null, at: new Date(now - age * day), data: { users: age, operator: 'test' } });
        }
      }),
    );
    const tasks = PURGE_TASKS.filter((t) => t.name === 'audit_entries');
    expect(tasks).toHaveLength(1);
    const result = await runHousekeeping({ ...svc.deps, logger: { info: () => {}, warn: () => {} } }, tasks);
    expect(result.failed).toEqual([]);
    const kept = (await auditRows(svc, { requestId: marker })).map((e) => e.data.users);
    expect(kept).toEqual([days - 1, 1]);
  });
});

describe('capabilities', () => {
  it('reports audit: true', async () => {
    const res = await call('GET', '/capabilities', { headers: ceo.headers });
    expect(res.json().data.audit).toBe(true);
  });
});
