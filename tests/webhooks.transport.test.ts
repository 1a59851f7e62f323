// One delivery attempt on the wire (CONTRACT §4.12): the SSRF guard on the address actually connected to, and every failure in the contract's words.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isForbiddenAddress, type Resolver } from '../src/services/webhooks/destination.ts';
import { attemptDelivery, type AttemptOptions } from '../src/services/webhooks/transport.ts';
import { RETRY_FACTORS, retryDelayS } from '../src/services/webhooks/schedule.ts';
import { closedPort, startReceiver, type Receiver } from './helpers/webhooks.ts';

let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const guarded: AttemptOptions = { timeoutMs: 2000, allowPrivate: false };
const open: AttemptOptions = { timeoutMs: 2000, allowPrivate: true };
const post = (url: string, opts: AttemptOptions) => attemptDelivery(url, '{"x":1}', { 'content-type': 'application/json' }, opts);

describe('refused destinations (unless WEBHOOK_ALLOW_PRIVATE)', () => {
  it.each([
    '127.0.0.1',
    '127.255.0.9',
    '10.1.2.3',
    '172.16.0.1',
    '172.31.255.255',
    '192.168.1.1',
    '100.64.0.1',
    '100.127.255.254',
    '169.254.169.254',
    '0.0.0.0',
    '::1',
    '::',
    'fc00::1',
    'fd12:3456::1',
    'fe80::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:10.0.0.1',
  ])('%s is refused', (address) => {
    expect(isForbiddenAddress(address)).toBe(true);
  });

  it.each(['192.0.2.10', '8.8.8.8', '172.32.0.1', '100.128.0.1', '2001:db8::1', '::ffff:8.8.8.8'])('%s is allowed', (address) => {
    expect(isForbiddenAddress(address)).toBe(false);
  });
});

describe('an attempt whose connection would go to a refused address fails with "destination not allowed" and sends nothing', () => {
  it.each([
    ['a literal loopback address', (port: number) => `http://127.0.0.1:${port}/hook`],
    ['the IPv6 loopback', (port: number) => `http://[::1]:${port}/hook`],
    ['an IPv4-mapped loopback', (port: number) => `http://[::ffff:127.0.0.1]:${port}/hook`],
    ['the unspecified address', (port: number) => `http://0.0.0.0:${port}/hook`],
    ['a name that resolves to 127.0.0.1 (localhost)', (port: number) => `http://localhost:${port}/hook`],
  ])('%s', async (_name, urlFor) => {
    const before = receiver.received.length;
    const result = await post(urlFor(receiver.port), guarded);
    expect(result).toEqual({ ok: false, status: null, error: 'destination not allowed' });
    expect(receiver.received.length).toBe(before);
  });

  it('the check is on the address resolved when connecting: a name that now resolves to 127.0.0.1 (DNS rebinding) gets no further', async () => {
    const rebinding: Resolver = (hostname) => Promise.resolve(hostname === 'hooks.rebind.test' ? [{ address: '127.0.0.1', family: 4 }] : []);
    const before = receiver.received.length;
    const result = await post(`http://hooks.rebind.test:${receiver.port}/hook`, { ...guarded, resolve: rebinding });
    expect(result).toEqual({ ok: false, status: null, error: 'destination not allowed' });
    expect(receiver.received.length).toBe(before);
  });

  it('a name with one refused address among others is refused', async () => {
    const mixed: Resolver = () => Promise.resolve([{ address: '192.0.2.10', family: 4 }, { address: '10.0.0.7', family: 4 }]);
    const result = await post('http://mixed.test/hook', { ...guarded, resolve: mixed });
    expect(result).toEqual({ ok: false, status: null, error: 'destination not allowed' });
  });

  it('with WEBHOOK_ALLOW_PRIVATE the same loopback receiver is reached', async () => {
    const result = await post(`http://localhost:${receiver.port}/hook`, open);
    expect(result).toEqual({ ok: true, status: 200 });
  });
});

describe('outcomes in the contract\'s words', () => {
  it('a 2xx is a success', async () => {
    receiver.answers.push({ status: 204 });
    expect(await post(receiver.url, open)).toEqual({ ok: true, status: 204 });
  });

  it('any other status is "HTTP <status>"', async () => {
    receiver.answers.push({ status: 500 }, { status: 404 }, { status: 410 });
    expect(await post(receiver.url, open)).toEqual({ ok: false, status: 500, error: 'HTTP 500' });
    expect(await post(receiver.url, open)).toEqual({ ok: false, status: 404, error: 'HTTP 404' });
    expect(await post(receiver.url, open)).toEqual({ ok: false, status: 410, error: 'HTTP 410' });
  });

  it('a redirect is not followed: "redirect not followed"', async () => {
    const before = receiver.received.length;
    receiver.answers.push({ status: 302, headers: { location: `${receiver.url}/elsewhere` } });
    expect(await post(receiver.url, open)).toEqual({ ok: false, status: 302, error: 'redirect not followed' });
    expect(receiver.received.length).toBe(before + 1);
  });

  it('nothing listening: "connection refused"', async () => {
    const port = await closedPort();
    expect(await post(`http://127.0.0.1:${port}/hook`, open)).toEqual({ ok: false, status: null, error: 'connection refused' });
  });

  it('a receiver that never answers: "timeout" once the timeout has passed, not later', async () => {
    receiver.answers.push({ hang: true });
    const started = Date.now();
    expect(await post(receiver.url, { ...open, timeoutMs: 500 })).toEqual({ ok: false, status: null, error: 'timeout' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('a 200 with an endless body is a success at once: the body is never read', async () => {
    receiver.answers.push({ status: 200, endlessBody: true });
    const started = Date.now();
    expect(await post(receiver.url, { ...open, timeoutMs: 1000 })).toEqual({ ok: true, status: 200 });
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('a name that does not resolve: "connection failed"', async () => {
    const nowhere: Resolver = () => Promise.reject(Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.test'), { code: 'ENOTFOUND' }));
    expect(await post('http://nowhere.test/hook', { ...guarded, resolve: nowhere })).toEqual({ ok: false, status: null, error: 'connection failed' });
  });
});

describe('the retry schedule', () => {
  it('retries after base × 1, 6, 24, 120, 720, 2160, 4320 seconds, each within ±20 %', () => {
    expect([...RETRY_FACTORS]).toEqual([1, 6, 24, 120, 720, 2160, 4320]);
    RETRY_FACTORS.forEach((factor, i) => {
      expect(retryDelayS(i + 1, 5, () => 0.5)).toBeCloseTo(5 * factor);
      expect(retryDelayS(i + 1, 5, () => 0)).toBeCloseTo(5 * factor * 0.8);
      expect(retryDelayS(i + 1, 5, () => 0.999999) / (5 * factor)).toBeCloseTo(1.2, 4);
    });
    // Beyond the table the last step repeats.
    expect(retryDelayS(12, 1, () => 0.5)).toBeCloseTo(4320);
  });
});
