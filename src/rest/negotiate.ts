// Accept negotiation for error bodies (CONTRACT §2.2): ProblemDetail only when the client prefers it.
const PROBLEM = 'application/problem+json';
const JSON_TYPE = 'application/json';
const PROBLEM_ANYWHERE = /application\/problem\+json/i;

/**
 * True when `application/problem+json` has a q-value at least as high as every entry naming
 * `application/json`; wildcards do not count and on equal q the earlier entry wins.
 */
export function prefersProblemJson(accept: string | undefined): boolean {
  // Media types are case-insensitive (RFC 9110 §8.3.1), so the shortcut must be too.
  if (!accept || !PROBLEM_ANYWHERE.test(accept)) return false;
  let problem: Preference | null = null;
  let json: Preference | null = null;
  const entries = accept.split(',');
  for (let index = 0; index < entries.length; index++) {
    const [rawType = '', ...params] = (entries[index] ?? '').split(';');
    const type = rawType.trim().toLowerCase();
    if (type !== PROBLEM && type !== JSON_TYPE) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=').map((s) => s.trim());
      if (key?.toLowerCase() === 'q') {
        const parsed = Number(value);
        q = Number.isFinite(parsed) && parsed >= 0 && parsed <= 1 ? parsed : 0;
      }
    }
    if (type === PROBLEM) {
      if (!problem || q > problem.q) problem = { q, index };
    } else if (!json || q > json.q) json = { q, index };
  }
  if (!problem || problem.q === 0) return false;
  if (!json) return true;
  return problem.q > json.q || (problem.q === json.q && problem.index < json.index);
}

type Preference = { q: number; index: number };
