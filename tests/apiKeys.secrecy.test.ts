// Keys never appear in logs, error bodies, events or metrics (CONTRACT §3.5): every trace-level log line of requests made with keys is searched for them.
import { randomBytes } from 'node:crypto';
import type { InjectOptions } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { kysely } from '../src/db/kysely.ts';
import { createServiceAccount, issueKey, type TestKey } from './helpers/apiKeys.ts';
import { PROBLEM } from './helpers/http.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

/** Every line the service logs, kept in memory. */
const lines: string[] = [];
const sink = { write: (line: string) => void lines.push(line) };

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  // The most verbose level, so nothing a quieter level would hide escapes the check.
  svc = await startTestService({ env: { LOG_LEVEL: 'trace', RATE_LIMITS_ENABLED: 'false' }, logDestination: sink });
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

/** What must never show: the random part of a key (its first 12 characters are the public prefix). */
const secretPart = (secret: string) => secret.slice(12);

function expectNowhere(secrets: readonly string[], text: string, where: string): void {
  for (const secret of secrets) expect(text.includes(secretPart(secret)), `${where} holds a key`).toBe(false);
}

const APPROVAL = { action_type: 'deploy:production', title: 'ship it', description: 'release', risk_level: 'high' };

describe('the secret of a key stays out of everything but its one creation answer', () => {
  it('logs, error bodies, events and metrics of requests with valid, revoked and malformed keys never hold it', async () => {
    lines.length = 0;
    const bot = await createServiceAccount(ceo, 'pair_programmer');
    const created = await svc.app.inject({ method: 'POST', url: '/api/v1/api-keys', headers: ceo.headers, payload: { name: 'agent', scopes: ['approvals:write', 'events:read'], user_id: bot.id } });
    expect(created.statusCode).toBe(201);
    const valid: TestKey = { ...(await issueKey(svc, ceo, ['approvals:write'], { userId: bot.id })) };
    const revoked = await issueKey(svc, ceo, ['approvals:write'], { userId: bot.id });
    await ceo.caller.apiKeys.revoke({ key_id: revoked.id });
    const createdSecret: string = created.json().data.secret;
    const malformed = `${valid.secret.slice(0, 30)}${randomBytes(4).toString('hex')}`;
    const secrets = [createdSecret, valid.secret, revoked.secret, malformed];

    const bodies: string[] = [];
    const send = async (init: InjectOptions) => {
      const res = await svc.app.inject(init);
      bodies.push(`${res.statusCode} ${res.body} ${JSON.stringify(res.headers)}`);
      return res;
    };
    for (const secret of secrets) {
      const authorization = `Bearer ${secret}`;
      for (const accept of [{}, PROBLEM]) {
        await send({ method: 'POST', url: '/api/v1/approvals', headers: { authorization, ...accept }, payload: APPROVAL });
        await send({ method: 'POST', url: '/api/v1/approvals', headers: { authorization, ...accept }, payload: { ...APPROVAL, extra: secret } });
        await send({ method: 'GET', url: '/api/v1/users', headers: { authorization, ...accept } });
        await send({ method: 'PATCH', url: `/api/v1/users/${bot.id}`, headers: { authorization, ...accept }, payload: { role: 'manager' } });
        await send({ method: 'GET', url: '/api/v1/auth/me', headers: { authorization, ...accept } });
        await send({ method: 'POST', url: '/api/v1/auth/ws-ticket', headers: { authorization, ...accept } });
        await send({ method: 'POST', url: '/api/v1/auth/logout', headers: { authorization, ...accept } });
        await send({ method: 'GET', url: '/api/trpc/auth.me', headers: { authorization, ...accept } });
        await send({ method: 'GET', url: '/api/v1/users', headers: { ...accept }, cookies: { session: secret } });
        await send({ method: 'GET', url: `/api/v1/no-such-route`, headers: { authorization, ...accept } });
        // A key where it is no credential: in the query string.
        await send({ method: 'GET', url: `/api/v1/users?api_key=${secret}`, headers: { ...accept } });
        await send({ method: 'GET', url: `/api/v1/users?limit=${secret}`, headers: { authorization, ...accept } });
      }
    }
    // Every request above was answered; the valid key did its work.
    expect(bodies.some((b) => b.startsWith('201 '))).toBe(true);

    const metrics = await svc.app.inject({ method: 'GET', url: '/metrics' });
    const events = await kysely(svc.deps.orm.em.fork()).selectFrom('events').select('data').execute();
    const tickets = await kysely(svc.deps.orm.em.fork()).selectFrom('ws_tickets').selectAll().execute();

    expect(lines.length).toBeGreaterThan(secrets.length * 10);
    expectNowhere(secrets, lines.join('\n'), 'the log');
    expectNowhere(secrets, bodies.join('\n'), 'a response');
    expectNowhere(secrets, metrics.body, 'the metrics');
    expectNowhere(secrets, JSON.stringify(events), 'an event');
    expectNowhere(secrets, JSON.stringify(tickets), 'a ticket');
  });
});
