// CONTRACT §3.4 (rev. 2): names a person cannot tell apart are one name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { confusableSkeleton, nfkcCasefold } from '../src/services/auth/usernameKeys.ts';
import type { TestService } from './helpers/service.ts';
import { startWithCeo, type TestUser } from './helpers/users.ts';

let svc: TestService;
let ceo: TestUser;
beforeAll(async () => {
  ({ svc, ceo } = await startWithCeo());
});
afterAll(() => svc.close());

const PASSWORD = 'a perfectly fine password';

const createUser = (username: string) =>
  svc.app.inject({
    method: 'POST',
    url: '/api/v1/users',
    headers: { ...ceo.headers, 'content-type': 'application/json', accept: 'application/problem+json' },
    payload: JSON.stringify({ username, password: PASSWORD, role: 'observer' }),
  });

const login = (username: string, password = PASSWORD) =>
  svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ username, password }) });

/** A fresh ASCII base per test, so tests never depend on each other's users. */
let counter = 0;
const fresh = (stem: string) => `${stem}${String(++counter)}${Math.random().toString(36).slice(2, 6)}`;

describe('the uniqueness key is NFKC_Casefold', () => {
  it('folds compatibility forms and full case: ｃｅｏ = ceo, STRASSE = straße', () => {
    expect(nfkcCasefold('ｃｅｏ')).toBe('ceo');
    expect(nfkcCasefold('STRASSE')).toBe(nfkcCasefold('straße'));
    expect(nfkcCasefold('ǅemal')).toBe(nfkcCasefold('DŽEMAL'));
  });

  it('a fullwidth spelling of an existing name is 409/4001', async () => {
    const name = fresh('dana');
    expect((await createUser(name)).statusCode).toBe(201);
    const fullwidth = [...name].map((c) => String.fromCodePoint((c.codePointAt(0) ?? 0) + 0xfee0)).join('');
    const res = await createUser(fullwidth);
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ error_code: 4001, error_category: 'conflict' });
  });

  it('STRASSE beside straße is 409/4001 (full case folding, not toLowerCase)', async () => {
    const suffix = fresh('');
    expect((await createUser(`straße${suffix}`)).statusCode).toBe(201);
    expect((await createUser(`STRASSE${suffix}`)).json()).toMatchObject({ status: 409, error_code: 4001 });
  });

  it('login matches the folded name: ＬＯＧＩＮ and straße logins find their users', async () => {
    const suffix = fresh('');
    expect((await createUser(`Strasse${suffix}`)).statusCode).toBe(201);
    expect((await login(`straße${suffix}`)).statusCode).toBe(200);
    expect((await login(`ＳＴＲＡＳＳＥ${suffix}`)).statusCode).toBe(200);
  });

  it('any valid name fits the key column: 128 × İ and 128 × U+FDFA are created (201), not 500', async () => {
    for (const name of ['İ'.repeat(128), '\ufdfa'.repeat(128)]) {
      const res = await createUser(name);
      expect(res.statusCode, name.slice(0, 1)).toBe(201);
      expect((await login(name)).statusCode).toBe(200);
    }
  });
});

describe('look-alike names are duplicates (TR39 confusable skeleton)', () => {
  it('Cyrillic о in place of Latin o is the same skeleton', () => {
    expect(confusableSkeleton('ce\u043e')).toBe(confusableSkeleton('ceo'));
    expect(confusableSkeleton('bob')).not.toBe(confusableSkeleton('rob'));
  });

  it('a name whose skeleton equals an existing user\'s is 409/4001 and is not created', async () => {
    const name = `${fresh('xyz')}o`;
    expect((await createUser(name)).statusCode).toBe(201);
    const lookalike = `${name.slice(0, -1)}\u043e`;
    const res = await createUser(lookalike);
    expect(res.json()).toMatchObject({ status: 409, error_code: 4001 });
    expect((await login(lookalike)).statusCode).toBe(401);
  });

  it('the first-run CEO name is protected too: a look-alike of it is refused', async () => {
    const lookalike = ceo.username.replace(/o/g, '\u043e').replace(/a/g, '\u0430').replace(/e/g, '\u0435');
    expect(lookalike).not.toBe(ceo.username);
    expect((await createUser(lookalike)).json()).toMatchObject({ status: 409, error_code: 4001 });
  });
});

describe('invisible and bidirectional characters are refused (400/2001)', () => {
  for (const [label, char] of [
    ['zero-width space', '\u200b'],
    ['zero-width joiner', '\u200d'],
    ['byte-order mark', '\ufeff'],
    ['right-to-left override', '\u202e'],
    ['left-to-right isolate', '\u2066'],
    ['pop directional isolate', '\u2069'],
  ] as const) {
    it(`a username containing a ${label} is 400/2001 naming the field`, async () => {
      const res = await createUser(`ce${char}o${fresh('')}`);
      expect(res.statusCode).toBe(400);
      expect(res.json()).toMatchObject({ error_code: 2001 });
      expect(res.json().detail).toMatch(/^body\.username: /);
    });
  }
});

describe('every character that renders blank is refused wherever it stands, before trimming (CONTRACT §3.7)', () => {
  const refused = async (username: string) => {
    const res = await createUser(username);
    expect(res.statusCode, JSON.stringify(username)).toBe(400);
    expect(res.json()).toMatchObject({ error_code: 2001 });
    expect(res.json().detail).toMatch(/^body\.username: /);
  };

  for (const [label, char] of [
    ['braille blank U+2800', '\u2800'],
    ['Hangul filler U+3164', '\u3164'],
    ['halfwidth Hangul filler U+FFA0', '\uffa0'],
    ['Hangul choseong filler U+115F', '\u115f'],
    ['Hangul jungseong filler U+1160', '\u1160'],
    ['soft hyphen', '\u00ad'],
    ['word joiner', '\u2060'],
  ] as const) {
    it(`a ${label} inside, at the end or at the start is 400/2001`, async () => {
      const base = fresh('boss');
      await refused(`${base.slice(0, 2)}${char}${base.slice(2)}`);
      await refused(`${base}${char}`);
      await refused(`${char}${base}`);
    });
  }

  it('a leading byte-order mark is refused, not stripped: "\\ufeffmallory" is not created as mallory', async () => {
    const name = fresh('mallory');
    await refused(`\ufeff${name}`);
    await refused(`${name}\ufeff`);
    expect((await createUser(name)).statusCode).toBe(201);
  });

  it('"Boss\\u2800" beside Boss is refused, not a second Boss', async () => {
    const name = fresh('Boss');
    expect((await createUser(name)).statusCode).toBe(201);
    await refused(`${name}\u2800`);
    await refused(`${name} \u2800`);
  });

  it('ordinary spaces at the ends are still trimmed', async () => {
    const name = fresh('spaced');
    const res = await createUser(`  ${name} `);
    expect(res.statusCode).toBe(201);
    expect(res.json().data.username).toBe(name);
  });

  it('at sign-in too: a name with a leading BOM is 400/2001, not the user without it', async () => {
    const name = fresh('signin');
    expect((await createUser(name)).statusCode).toBe(201);
    const res = await svc.app.inject({ method: 'POST', url: '/api/v1/auth/login', headers: { accept: 'application/problem+json' }, payload: { username: `\ufeff${name}`, password: PASSWORD } });
    expect(res.json()).toMatchObject({ status: 400, error_code: 2001 });
  });
});
