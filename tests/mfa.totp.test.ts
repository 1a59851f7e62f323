// CONTRACT §3.6: TOTP as RFC 6238 computes it (SHA-1, 6 digits, 30 s, one step either side), and the key sealed at rest.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { open, seal } from '../src/services/mfa/secretBox.ts';
import { matchingStep, otpauthUrl } from '../src/services/mfa/totp.ts';

// RFC 6238 Appendix B: the SHA-1 seed, and the 8-digit values of which a 6-digit code is the last six.
const RFC_KEY = new TextEncoder().encode('12345678901234567890');
const RFC_VECTORS = [
  { t: 59, code: '287082' },
  { t: 1111111109, code: '081804' },
  { t: 1111111111, code: '050471' },
  { t: 1234567890, code: '005924' },
  { t: 2000000000, code: '279037' },
  { t: 20000000000, code: '353130' },
];

describe('TOTP (RFC 6238)', () => {
  it("accepts the RFC's test vectors at their time, as the code of that time's step", () => {
    for (const { t, code } of RFC_VECTORS) expect(matchingStep(RFC_KEY, code, new Date(t * 1000)), String(t)).toBe(Math.floor(t / 30));
  });

  it('accepts a code one step early or late, not two', () => {
    const { t, code } = RFC_VECTORS[3] ?? { t: 0, code: '' };
    const step = Math.floor(t / 30);
    expect(matchingStep(RFC_KEY, code, new Date((t - 30) * 1000))).toBe(step);
    expect(matchingStep(RFC_KEY, code, new Date((t + 30) * 1000))).toBe(step);
    expect(matchingStep(RFC_KEY, code, new Date((t + 60) * 1000))).toBeNull();
    expect(matchingStep(RFC_KEY, code, new Date((t - 60) * 1000))).toBeNull();
  });

  it('writes the otpauth URL of CONTRACT §3.6', () => {
    expect(otpauthUrl('ada lovelace/ops', RFC_KEY)).toBe(
      'otpauth://totp/agent-org:ada%20lovelace%2Fops?secret=GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ&issuer=agent-org&algorithm=SHA1&digits=6&period=30',
    );
  });
});

describe('keys at rest', () => {
  const secret = randomBytes(32);

  it('open gives back what seal sealed, for the same user and server secret only', () => {
    const key = new Uint8Array(randomBytes(20));
    const sealed = seal(secret, key, 'user-a');
    expect(open(secret, sealed, 'user-a')).toEqual(key);
    expect(() => open(secret, sealed, 'user-b')).toThrow();
    expect(() => open(randomBytes(32), sealed, 'user-a')).toThrow(/APP_SECRET/);
    expect(seal(secret, key, 'user-a')).not.toBe(sealed);
  });

  it('an altered sealed key does not open', () => {
    const sealed = seal(secret, new Uint8Array(randomBytes(20)), 'user-a');
    const bytes = Buffer.from(sealed.slice(3), 'base64url');
    bytes[15] = (bytes[15] ?? 0) ^ 1;
    expect(() => open(secret, `v1.${bytes.toString('base64url')}`, 'user-a')).toThrow();
  });
});
