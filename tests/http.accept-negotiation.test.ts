// Accept negotiation of error bodies (CONTRACT §2.2): the edge cases of prefersProblemJson, and one request end to end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prefersProblemJson } from '../src/rest/negotiate.ts';
import { startTestService, type TestService } from './helpers/service.ts';

const PROBLEM = 'application/problem+json';
const JSON_TYPE = 'application/json';

describe('whitespace around types and parameters is ignored', () => {
  it.each([
    [`  ${PROBLEM}  `, true],
    [`${PROBLEM} ; q=0.8 , ${JSON_TYPE} ; q=0.7`, true],
    [`${PROBLEM};q = 0.4,${JSON_TYPE};q= 0.5`, false],
    [`${JSON_TYPE}\t;\tq=0.2,\t${PROBLEM}`, true],
    [`${JSON_TYPE};  q=0.9  , ${PROBLEM};q=0.9`, false],
  ])('%j → %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});

describe('q-values', () => {
  it.each([
    // Bounds are valid values.
    [`${PROBLEM};q=1, ${JSON_TYPE};q=1`, true],
    [`${JSON_TYPE};q=0, ${PROBLEM};q=0.001`, true],
    [`${PROBLEM};q=0`, false],
    [`${PROBLEM};q=0.000`, false],
    [`${PROBLEM};q=1.000, ${JSON_TYPE};q=0.999`, true],
    // Outside 0..1 or malformed: the entry counts as q=0 (not acceptable).
    [`${PROBLEM};q=1.5`, false],
    [`${PROBLEM};q=-0.5`, false],
    [`${PROBLEM};q=abc`, false],
    [`${PROBLEM};q`, false],
    [`${PROBLEM};q=Infinity`, false],
    [`${PROBLEM};q=0.5, ${JSON_TYPE};q=2`, true],
    [`${PROBLEM};q=0.5, ${JSON_TYPE};q=oops`, true],
    [`${PROBLEM};q=0.5, ${JSON_TYPE};q=-1`, true],
    // The parameter name is case-insensitive.
    [`${PROBLEM};Q=0.4, ${JSON_TYPE};Q=0.5`, false],
    [`${JSON_TYPE};Q=0.4, ${PROBLEM};Q=0.5`, true],
  ])('%j → %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});

describe('other parameters', () => {
  it.each([
    [`${PROBLEM}; charset=utf-8`, true],
    [`${PROBLEM}; charset=utf-8; q=0.3, ${JSON_TYPE}; q=0.4`, false],
    [`${JSON_TYPE}; charset=utf-8; q=0.3, ${PROBLEM}; profile="x"; q=0.4`, true],
    // A parameter that only looks like q: problem+json keeps q=1.
    [`${PROBLEM}; qs=0.1, ${JSON_TYPE}; q=0.9`, true],
    [`${PROBLEM}; q=0.5; qs=1, ${JSON_TYPE}; q=0.9`, false],
    [`${PROBLEM}; level=1; q=0.9; x=0, ${JSON_TYPE}; q=0.8`, true],
  ])('%j → %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});

describe('repeated media types: each counts with its best q', () => {
  it.each([
    [`${JSON_TYPE};q=0.1, ${JSON_TYPE};q=0.9, ${PROBLEM};q=0.5`, false],
    [`${JSON_TYPE};q=0.9, ${JSON_TYPE};q=0.1, ${PROBLEM};q=0.5`, false],
    [`${PROBLEM};q=0.1, ${PROBLEM};q=0.9, ${JSON_TYPE};q=0.5`, true],
    [`${PROBLEM};q=0, ${PROBLEM};q=0.6, ${JSON_TYPE};q=0.6`, true],
    [`${PROBLEM};q=0.1, ${JSON_TYPE};q=0.6, ${PROBLEM};q=0.6`, false],
    [`${PROBLEM};q=0, ${PROBLEM}`, true],
    [`${PROBLEM}, ${PROBLEM};q=0`, true],
  ])('%j → %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});

describe('equal q: the earlier entry wins', () => {
  it.each([
    [`${PROBLEM};q=0.5, ${JSON_TYPE};q=0.5`, true],
    [`${JSON_TYPE};q=0.5, ${PROBLEM};q=0.5`, false],
    [`${PROBLEM}, ${JSON_TYPE}`, true],
    [`${JSON_TYPE}, ${PROBLEM}`, false],
    // The earliest entry of the best q decides, not a later repeat.
    [`${JSON_TYPE};q=0.5, ${PROBLEM};q=0.5, ${JSON_TYPE};q=0.5`, false],
    [`${PROBLEM};q=0.5, ${JSON_TYPE};q=0.5, ${PROBLEM};q=0.5`, true],
    [`${JSON_TYPE};q=0.2, ${PROBLEM};q=0.7, ${JSON_TYPE};q=0.7`, true],
    [`${PROBLEM};q=0.2, ${JSON_TYPE};q=0.7, ${PROBLEM};q=0.7`, false],
  ])('%j → %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});

describe('wildcards do not count', () => {
  it.each([
    ['*/*', false],
    ['application/*', false],
    [`*/*;q=1, ${PROBLEM};q=0.1`, true],
    [`application/*, ${PROBLEM};q=0.01`, true],
    [`${PROBLEM};q=0.1, */*`, true],
    [`${JSON_TYPE};q=0.1, application/*, ${PROBLEM};q=0.2`, true],
  ])('%j → %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});

describe('media types are matched exactly, whatever their case', () => {
  it.each([
    ['Application/Problem+JSON', true],
    [`APPLICATION/PROBLEM+JSON;q=0.6, ${JSON_TYPE};q=0.5`, true],
    [`${PROBLEM};q=0.5, Application/JSON`, false],
    ['application/problem+jsonx', false],
    ['application/problem+json+x, application/json;q=0.1', false],
    ['text/application/problem+json', false],
    ['application/problem', false],
    ['', false],
    [',,;;,', false],
  ])('%j → %s', (accept, expected) => {
    expect(prefersProblemJson(accept)).toBe(expected);
  });
});

describe('over HTTP', () => {
  let svc: TestService;
  beforeAll(async () => {
    svc = await startTestService();
  });
  afterAll(() => svc.close());

  it.each([
    ['Application/Problem+JSON', 'application/problem+json'],
    [`  ${PROBLEM} ; charset=utf-8 ; q=0.8 , ${JSON_TYPE};q=0.8`, 'application/problem+json'],
    [`${JSON_TYPE};q=0.8, ${PROBLEM};q=0.8`, 'application/json; charset=utf-8'],
    [`${PROBLEM};q=7`, 'application/json; charset=utf-8'],
  ])('an error with Accept %j is sent as %s', async (accept, contentType) => {
    const res = await svc.app.inject({ method: 'GET', url: '/api/v1/nope', headers: { accept } });
    expect(res.statusCode).toBe(404);
    expect(res.headers['content-type']).toBe(contentType);
    if (contentType === PROBLEM) expect(res.json()).toMatchObject({ status: 404, error_code: 3002 });
    else expect(res.json()).toMatchObject({ success: false, error_detail: { error_code: 3002 } });
  });
});
