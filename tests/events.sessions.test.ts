// CONTRACT §4.8: every way a session ends writes one session.revoked, delivered only to the session's own user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resetPassword, revokeSessions } from '../src/admin/commands.ts';
import { kysely } from '../src/db/kysely.ts';
import { listen, sleep, TestSocket, type LiveEventBody } from './helpers/events.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

// Small, so that the eviction test needs only a few sign-ins.
const MAX_SESSIONS = 3;

let svc: TestService;
let base: string;
let ceo: TestUser;
beforeAll(async () => {
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', MAX_SESSIONS_PER_USER: String(MAX_SESSIONS) } });
  base = await listen(svc);
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

type Session = { token: string; sessionId: string };

/** Another session of `user`, through POST /auth/login. */
async function login(user: TestUser): Promise<Session> {
  const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', payload: { username: user.username, password: user.password } });
  expect(res.statusCode).toBe(200);
  return { token: res.cookies.find((c) => c.name === 'session')?.value ?? '', sessionId: res.json().data.session_id };
}

/** A socket on `session` subscribed to `sessions` (a session's own revocation reaches it whatever it subscribed). */
async function socketOn(session: Session): Promise<TestSocket> {
  const ticket = (await svc.caller({ bearerToken: session.token }).auth.wsTicket()).ticket;
  const socket = await TestSocket.open(base, { ticket });
  expect((await socket.request({ type: 'subscribe', channels: ['sessions'] })).type).toBe('subscribed');
  return socket;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** A user of its own with a socket on a second session, and a bystander (another user) subscribed to `sessions` too. */
async function setup() {
  const user = await createUser(svc);
  const watched = await login(user);
  const socket = await socketOn(watched);
  const bystander = await createUser(svc);
  const bystanderSocket = await socketOn(bystander);
  return { user, watched, socket, bystander, bystanderSocket };
}

/**
 * Proves the bystander received nothing before now: ending one of its own sessions is its next event. Its
 * socket's session is kept, so the socket stays open for the check.
 */
async function expectNothingFor(bystander: TestUser, socket: TestSocket): Promise<void> {
  const extra = await login(bystander);
  expect((await svc.app.inject({ method: 'DELETE', url: `/api/v1/auth/sessions/${extra.sessionId}`, headers: bearer(extra.token) })).statusCode).toBe(204);
  expect((await socket.events(1))[0]).toMatchObject({ type: 'session.revoked', data: { session_id: extra.sessionId, reason: 'revoked' } });
  socket.close();
}

/** Events the socket received before it closed (call once `closed` has resolved). */
const received = (socket: TestSocket): LiveEventBody[] => socket.pending().flatMap((f) => (f.event ? [f.event] : []));

/** The data of every session.revoked addressed to `userId`, sorted. */
async function revocationsOf(userId: string): Promise<unknown[]> {
  const rows = await kysely(svc.deps.orm.em.fork()).selectFrom('events').select('data').where('type', '=', 'session.revoked').where('audienceUserId', '=', userId).execute();
  return rows.map((r) => r.data).sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
}

const outboxRows = async () => Number((await kysely(svc.deps.orm.em.fork()).selectFrom('events').select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow()).n);

describe('logout → session.revoked (logout)', () => {
  it('reaches the user\'s other sessions (actor: the user), and nobody else', async () => {
    const { user, socket, bystander, bystanderSocket } = await setup();
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: user.headers })).statusCode).toBe(204);
    const [event] = await socket.events(1);
    expect(event).toMatchObject({ type: 'session.revoked', channel: 'sessions', actor: user.username });
    expect(event?.data).toEqual({ session_id: user.sessionId, reason: 'logout' });
    await expectNothingFor(bystander, bystanderSocket);
    socket.close();
  });

  it('of the socket\'s own session: the event, then close 4001 within 2 s', async () => {
    const { watched, socket, bystanderSocket } = await setup();
    bystanderSocket.close();
    const started = Date.now();
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: bearer(watched.token) })).statusCode).toBe(204);
    expect((await socket.events(1, 2000))[0]?.data).toEqual({ session_id: watched.sessionId, reason: 'logout' });
    expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a second logout of an ended session writes no event', async () => {
    const user = await createUser(svc);
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: user.headers })).statusCode).toBe(204);
    const before = await outboxRows();
    expect((await svc.app.inject({ method: 'POST', url: '/api/v1/auth/logout', headers: user.headers })).statusCode).toBe(204);
    expect(await outboxRows()).toBe(before);
  });
});

describe('DELETE /auth/sessions/{id} → session.revoked (revoked)', () => {
  it('one\'s own other session: actor the user', async () => {
    const { user, socket, bystander, bystanderSocket } = await setup();
    const other = await login(user);
    expect((await svc.app.inject({ method: 'DELETE', url: `/api/v1/auth/sessions/${other.sessionId}`, headers: user.headers })).statusCode).toBe(204);
    expect((await socket.events(1))[0]).toMatchObject({ actor: user.username, data: { session_id: other.sessionId, reason: 'revoked' } });
    await expectNothingFor(bystander, bystanderSocket);
    socket.close();
  });

  it('the CEO revoking another user\'s session: the event goes to that user, not to the CEO', async () => {
    const { user, socket, bystanderSocket } = await setup();
    bystanderSocket.close();
    const ceoSocket = await socketOn(ceo);
    expect((await svc.app.inject({ method: 'DELETE', url: `/api/v1/auth/sessions/${user.sessionId}`, headers: ceo.headers })).statusCode).toBe(204);
    expect((await socket.events(1))[0]).toMatchObject({ actor: ceo.username, data: { session_id: user.sessionId, reason: 'revoked' } });
    await expectNothingFor(ceo, ceoSocket);
    socket.close();
  });

  it('a refused revocation (404: someone else\'s session, for a non-CEO) writes no event', async () => {
    const user = await createUser(svc);
    const other = await createUser(svc);
    const before = await outboxRows();
    expect((await svc.app.inject({ method: 'DELETE', url: `/api/v1/auth/sessions/${other.sessionId}`, headers: user.headers })).statusCode).toBe(404);
    expect(await outboxRows()).toBe(before);
  });
});

describe('POST /auth/change-password → session.revoked (password_changed)', () => {
  it('one event per other session (the socket\'s own among them: then 4001), none for the session that changed it', async () => {
    const { user, watched, socket, bystander, bystanderSocket } = await setup();
    const changer = await login(user);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/change-password', headers: bearer(changer.token), payload: { current_password: user.password, new_password: 'a brand new passphrase' } });
    expect(res.statusCode).toBe(200);
    expect((await socket.closed).code).toBe(4001);
    expect(received(socket).at(-1)).toMatchObject({ type: 'session.revoked', actor: user.username, data: { session_id: watched.sessionId, reason: 'password_changed' } });
    expect(await revocationsOf(user.id)).toEqual([user.sessionId, watched.sessionId].sort().map((id) => ({ session_id: id, reason: 'password_changed' })));
    await expectNothingFor(bystander, bystanderSocket);
  });
});

describe('sign-in beyond MAX_SESSIONS_PER_USER → session.revoked (evicted)', () => {
  it('the oldest session is evicted with its event', async () => {
    const { user, socket, bystander, bystanderSocket } = await setup();
    // The helper's session is the oldest; with the watched one the user has 2 of 3.
    await login(user);
    await login(user);
    const [event] = await socket.events(1);
    expect(event).toMatchObject({ actor: user.username, data: { session_id: user.sessionId, reason: 'evicted' } });
    await expectNothingFor(bystander, bystanderSocket);
    socket.close();
  });
});

describe('refresh-token replay → session.revoked (refresh_replayed)', () => {
  it('the replayed session ends with its event, actor null', async () => {
    const { user, socket, bystander, bystanderSocket } = await setup();
    const refresh = () => svc.app.inject({ method: 'POST', url: '/api/v1/auth/refresh', cookies: { refresh_token: user.refreshToken } });
    expect((await refresh()).statusCode).toBe(200);
    expect((await refresh()).statusCode).toBe(401);
    const [event] = await socket.events(1);
    expect(event).toMatchObject({ actor: null, data: { session_id: user.sessionId, reason: 'refresh_replayed' } });
    await expectNothingFor(bystander, bystanderSocket);
    socket.close();
  });
});

describe('DELETE /users/{id} → session.revoked (user_deleted)', () => {
  it('every session of the user gets its event, and the user\'s sockets close with 4001 within 2 s', async () => {
    const { user, watched, socket, bystander, bystanderSocket } = await setup();
    const started = Date.now();
    expect((await svc.app.inject({ method: 'DELETE', url: `/api/v1/users/${user.id}`, headers: ceo.headers })).statusCode).toBe(204);
    expect((await socket.closed).code).toBe(4001);
    expect(Date.now() - started).toBeLessThan(2000);
    // The socket's own revocation is the last thing it gets; the other session's may come before it.
    expect(received(socket).at(-1)).toMatchObject({ type: 'session.revoked', actor: ceo.username, data: { session_id: watched.sessionId, reason: 'user_deleted' } });
    expect(await revocationsOf(user.id)).toEqual([user.sessionId, watched.sessionId].sort().map((id) => ({ session_id: id, reason: 'user_deleted' })));
    await expectNothingFor(bystander, bystanderSocket);
  });
});

describe('npm run admin', () => {
  it('revoke-sessions: one session.revoked (revoked) per live session, actor null', async () => {
    const { user, watched, socket, bystander, bystanderSocket } = await setup();
    const result = await revokeSessions({ em: svc.deps.orm.em.fork(), clock: svc.deps.clock }, user.username);
    expect(result.revokedSessions).toBe(2);
    expect((await socket.closed).code).toBe(4001);
    expect(received(socket).at(-1)).toMatchObject({ actor: null, data: { session_id: watched.sessionId, reason: 'revoked' } });
    expect(await revocationsOf(user.id)).toEqual([user.sessionId, watched.sessionId].sort().map((id) => ({ session_id: id, reason: 'revoked' })));
    await expectNothingFor(bystander, bystanderSocket);
  });

  it('reset-password: user.updated (must_change_password now true) and session.revoked (password_changed) per session, actor null', async () => {
    const { user, watched, socket, bystanderSocket } = await setup();
    bystanderSocket.close();
    const watcher = await TestSocket.open(base, await createUser(svc));
    expect((await watcher.request({ type: 'subscribe', channels: ['users'] })).type).toBe('subscribed');
    await resetPassword({ em: svc.deps.orm.em.fork(), clock: svc.deps.clock }, user.username);
    expect((await socket.closed).code).toBe(4001);
    expect(received(socket).at(-1)).toMatchObject({ actor: null, data: { session_id: watched.sessionId, reason: 'password_changed' } });
    expect(await revocationsOf(user.id)).toEqual([user.sessionId, watched.sessionId].sort().map((id) => ({ session_id: id, reason: 'password_changed' })));
    let updated: LiveEventBody | undefined;
    while (!updated) updated = (await watcher.events(1)).find((e) => e.type === 'user.updated' && e.data.id === user.id);
    expect(updated).toMatchObject({ actor: null, data: { must_change_password: true } });
    expect(updated.data).toEqual((await svc.app.inject({ method: 'GET', url: `/api/v1/users/${user.id}`, headers: ceo.headers })).json().data);
    watcher.close();
  });
});

describe('a session that ends by time', () => {
  it('gets no event; the session sweep closes its socket (4001) once its refresh window is over', async () => {
    const { watched, socket, bystanderSocket } = await setup();
    bystanderSocket.close();
    const before = await outboxRows();
    const past = new Date(Date.now() - 1000);
    await kysely(svc.deps.orm.em.fork()).updateTable('sessions').set({ expiresAt: past, refreshExpiresAt: past }).where('id', '=', watched.sessionId).execute();
    expect((await socket.closed).code).toBe(4001);
    expect(received(socket)).toEqual([]);
    await sleep(100);
    expect(await outboxRows()).toBe(before);
  });
});
