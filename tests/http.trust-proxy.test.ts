// CONTRACT §5 (rev. 2): TRUST_PROXY is false, a hop count or a list of proxies; the client is the rightmost untrusted address.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

describe('TRUST_PROXY parsing', () => {
  it('accepts false, a number of hops, and a list of addresses/CIDRs', () => {
    expect(loadConfig({}).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '0' }).trustProxy).toBe(false);
    expect(loadConfig({ TRUST_PROXY: '2' }).trustProxy).toEqual({ hops: 2 });
    expect(loadConfig({ TRUST_PROXY: '10.0.0.5, 10.1.0.0/16,::1,fd00::/8,loopback' }).trustProxy).toEqual({
      addresses: ['10.0.0.5', '10.1.0.0/16', '::1', 'fd00::/8', 'loopback'],
    });
  });

  it('refuses true at boot, saying why', () => {
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(ConfigError);
    expect(() => loadConfig({ TRUST_PROXY: 'true' })).toThrow(/TRUST_PROXY: .*leftmost X-Forwarded-For entry, which any client can write/);
  });

  it('refuses anything else', () => {
    for (const bad of ['nginx', '10.0.0.0/33', '300.1.1.1', '1.2.3.4/8/9', '-1']) {
      expect(() => loadConfig({ TRUST_PROXY: bad }), bad).toThrow(/TRUST_PROXY/);
    }
  });
});

describe('the client address behind proxies', () => {
  const services: TestService[] = [];
  let user: TestUser;
  let databaseUrl: string;
  beforeAll(async () => {
    const first = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
    services.push(first);
    databaseUrl = first.databaseUrl;
    // A CEO: login answers 409 until one exists.
    user = await createUser(first, { role: 'ceo' });
  });
  afterAll(async () => {
    for (const svc of services) await svc.close();
  });

  async function serviceWith(trustProxy: string): Promise<TestService> {
    const svc = await startTestService({ databaseUrl, env: { RATE_LIMITS_ENABLED: 'false', TRUST_PROXY: trustProxy } });
    services.push(svc);
    return svc;
  }

  /** Logs in from `peer` (the socket address) with the given X-Forwarded-For; returns the address the session recorded. */
  async function recordedAddress(svc: TestService, peer: string, forwardedFor?: string): Promise<string> {
    const login = await svc.app.inject({
      method: 'POST',
      url: '/api/v1/auth/login',
      remoteAddress: peer,
      headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
      payload: { username: user.username, password: user.password },
    });
    expect(login.statusCode, login.body).toBe(200);
    const sessionId: string = login.json().data.session_id;
    const sessions: { session_id: string; ip_address: string }[] = (
      await svc.app.inject({ method: 'GET', url: '/api/v1/auth/sessions', headers: user.headers })
    ).json().data;
    const session = sessions.find((s) => s.session_id === sessionId);
    if (!session) throw new Error('the new session is not listed');
    return session.ip_address;
  }

  it('TRUST_PROXY=false: the socket address, whatever X-Forwarded-For says', async () => {
    const svc = await serviceWith('false');
    expect(await recordedAddress(svc, '198.51.100.9', '203.0.113.7')).toBe('198.51.100.9');
  });

  it('one trusted hop (nginx appends the peer): a leftmost entry the client forged is not believed', async () => {
    // Fastify 5.12.8 reads a plain numeric trustProxy as "trust nobody"; the hop count must still work.
    const svc = await serviceWith('1');
    expect(await recordedAddress(svc, '127.0.0.1', '6.6.6.6, 203.0.113.7')).toBe('203.0.113.7');
    expect(await recordedAddress(svc, '127.0.0.1', '203.0.113.8')).toBe('203.0.113.8');
  });

  it('two trusted hops: the address the outer proxy saw', async () => {
    const svc = await serviceWith('2');
    expect(await recordedAddress(svc, '10.0.0.2', '6.6.6.6, 203.0.113.7, 10.0.0.1')).toBe('203.0.113.7');
  });

  it('a list of proxies: forwarded addresses only from them, and only up to the first untrusted one', async () => {
    const svc = await serviceWith('127.0.0.1,10.0.0.0/8');
    expect(await recordedAddress(svc, '127.0.0.1', '6.6.6.6, 203.0.113.7')).toBe('203.0.113.7');
    expect(await recordedAddress(svc, '127.0.0.1', '6.6.6.6, 203.0.113.7, 10.1.2.3')).toBe('203.0.113.7');
    // A client that reaches the service directly cannot claim another address.
    expect(await recordedAddress(svc, '198.51.100.9', '203.0.113.7')).toBe('198.51.100.9');
  });
});
