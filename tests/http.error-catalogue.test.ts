// GET /docs/errors is written from the code table in src/errors.ts and says when each code occurs (issue 12 item 7).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.ts';
import { startTestService, type TestService } from './helpers/service.ts';

let svc: TestService;
let page: string;
beforeAll(async () => {
  svc = await startTestService();
  page = (await svc.app.inject({ method: 'GET', url: '/docs/errors' })).body;
});
afterAll(() => svc.close());

/** The text of the table row of one code: cells separated by ` | `, other tags removed, entities decoded. */
function row(code: number): string {
  const match = new RegExp(`<tr id="${code}">(.*?)</tr>`, 's').exec(page);
  if (!match?.[1]) throw new Error(`no row for ${code}`);
  return match[1].replace(/<\/td>/g, ' | ').replace(/<[^>]+>/g, '').replace(/&#(\d+);/g, (_, n: string) => String.fromCharCode(Number(n)));
}

describe('GET /docs/errors', () => {
  it('has a row for every code of the table, with its name, status, retryability and when it occurs', () => {
    for (const [code, info] of Object.entries(ERROR_CODES)) {
      const text = row(Number(code));
      expect(text).toContain(info.name);
      expect(text).toContain(String(info.status));
      expect(text).toContain(info.retryable ? 'yes' : 'no');
      expect(text, code).toContain(info.when.replace(/`/g, ''));
    }
  });

  it('says that 1001 covers the role, CSRF, the pending password change and deciding one\'s own approval', () => {
    const text = row(1001);
    expect(text).toMatch(/role/);
    expect(text).toMatch(/X-CSRF-Token/);
    expect(text).toMatch(/password change required/);
    expect(text).toMatch(/own approval/);
  });

  it('lists 405 (with Allow) for 2001 besides 400, and names unstorable text and prototype keys', () => {
    const text = row(2001);
    expect(text).toMatch(/\b400, 405\b/);
    expect(text).toMatch(/405 and an Allow header/);
    expect(text).toMatch(/NUL/);
    expect(text).toMatch(/__proto__/);
  });

  it('marks up the table\'s `code` spans and escapes everything else', () => {
    expect(page).toContain('<code>X-CSRF-Token</code>');
    expect(page).not.toContain('`');
  });
});
