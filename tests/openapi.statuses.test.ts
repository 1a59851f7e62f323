// CONTRACT §1 (rev. 2): every status an operation can send is in the document, swept over every documented operation.
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { nativePool } from '../src/db/pool.ts';
import { expectResponseConforms, type OpenApiDocument } from './helpers/openapiConformance.ts';
import { operationsOf, urlOf, type DocumentedOperation } from './helpers/openapiOperations.ts';
import { startTestService, type TestService } from './helpers/service.ts';
import { createUser, type TestUser } from './helpers/users.ts';

let svc: TestService;
let doc: OpenApiDocument;
let operations: DocumentedOperation[];
let ceo: TestUser;
beforeAll(async () => {
  // Limits off: every operation is called many times from one address.
  svc = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false' } });
  doc = (await svc.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  operations = operationsOf(doc);
  ceo = await createUser(svc, { role: 'ceo' });
});
afterAll(() => svc.close());

type Call = { url?: string; headers?: Record<string, string>; payload?: string };

/** Calls the operation on `service` (JSON body `{}` unless told otherwise) and checks the answer against the document. */
async function call(service: TestService, document: OpenApiDocument, op: DocumentedOperation, req: Call = {}) {
  const url = req.url ?? urlOf(op);
  const payload = op.method === 'GET' ? undefined : (req.payload ?? '{}');
  const res = await service.app.inject({
    method: op.method,
    url,
    headers: { 'content-type': 'application/json', ...req.headers },
    ...(payload === undefined ? {} : { payload }),
  });
  expectResponseConforms(document, op.method, url, res);
  const json = res.body !== '' && res.headers['content-type']?.toString().includes('json') === true && !res.headers['content-type'].toString().includes('ndjson');
  return { status: res.statusCode, detail: json ? errorDetail(res.json()) : undefined, res };
}

function errorDetail(body: unknown): { error_code?: number; detail?: string } | undefined {
  if (typeof body !== 'object' || body === null || !('error_detail' in body)) return undefined;
  const detail = body.error_detail;
  if (typeof detail !== 'object' || detail === null) return undefined;
  return {
    ...('error_code' in detail && typeof detail.error_code === 'number' ? { error_code: detail.error_code } : {}),
    ...('detail' in detail && typeof detail.detail === 'string' ? { detail: detail.detail } : {}),
  };
}

const label = (op: DocumentedOperation) => `${op.method} ${op.path}`;

describe('who may call', () => {
  it('an anonymous call is refused with 401 exactly where the document asks for a credential', async () => {
    for (const op of operations) {
      const { status, detail } = await call(svc, doc, op);
      const refused = status === 401 && detail?.detail === 'authentication required';
      expect(refused, `${label(op)} answered ${status}`).toBe(op.authenticated);
    }
  });

  it('a user who must change the initial password gets the documented 403 everywhere but GET /auth/me and POST /auth/change-password', async () => {
    const pending = await createUser(svc, { role: 'manager', mustChangePassword: true });
    for (const op of operations.filter((o) => o.authenticated)) {
      const { status, detail } = await call(svc, doc, op, { headers: pending.headers });
      const gated = status === 403 && detail?.detail === 'password change required';
      expect(gated, `${label(op)} answered ${status}`).toBe(!['/auth/me', '/auth/change-password'].includes(op.path));
    }
  });

  it('a role the operation does not admit gets a documented 403', async () => {
    const observer = await createUser(svc, { role: 'observer' });
    let refused = 0;
    for (const op of operations.filter((o) => o.authenticated)) {
      const { status } = await call(svc, doc, op, { headers: observer.headers });
      if (status === 403) refused++;
    }
    expect(refused).toBeGreaterThan(10);
  });

  it('a cookie-authenticated call without X-CSRF-Token is refused exactly where the document requires the csrfToken scheme', async () => {
    const cookie = `session=${ceo.token}; csrf_token=${ceo.csrfToken}`;
    for (const op of operations.filter((o) => o.authenticated)) {
      const { status, detail } = await call(svc, doc, op, { headers: { cookie } });
      const refused = status === 403 && detail?.detail === 'missing or invalid CSRF token';
      expect(refused, `${label(op)} answered ${status}`).toBe(op.csrf);
    }
  });
});

describe('what was sent', () => {
  /** A request the operation's schema refuses: an overlong path parameter, a query value of the wrong type, an unknown body field. */
  function malformed(op: DocumentedOperation): Call {
    const params = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] ?? '');
    if (params.length > 0) return { url: urlOf(op, Object.fromEntries(params.map((name) => [name, name === 'agent_index' ? 'abc' : 'x'.repeat(129)]))) };
    if (op.method !== 'GET') return { payload: '{"zz_unknown_field": 1}' };
    const query = (op.parameters ?? []).find((p) => p.in === 'query' && (p.schema?.type === 'integer' || Array.isArray(p.schema?.enum) || p.schema?.format === 'date-time'));
    if (!query?.name) throw new Error(`${label(op)}: no query parameter to break`);
    return { url: `${urlOf(op)}?${query.name}=zz` };
  }

  it('a malformed request is a documented 400 wherever the document lists 400; junk sent to the others is ignored', async () => {
    const bystander = await createUser(svc, { role: 'observer' });
    // Logout last: it ends the session it is given.
    const ordered = [...operations].sort((a, b) => Number(a.path === '/auth/logout') - Number(b.path === '/auth/logout'));
    for (const op of ordered) {
      if (op.statuses.includes(400)) {
        const { status, detail } = await call(svc, doc, op, { ...malformed(op), headers: ceo.headers });
        expect(status, label(op)).toBe(400);
        expect(detail?.error_code, label(op)).toBe(2001);
      } else {
        const { status } = await call(svc, doc, op, { url: `${urlOf(op)}?zz=1&limit=abc`, payload: '{"zz": [1]}', headers: bystander.headers });
        expect(status, label(op)).not.toBe(400);
      }
    }
  });
});

describe('limits', () => {
  let limited: TestService;
  let limitedDoc: OpenApiDocument;
  beforeAll(async () => {
    limited = await startTestService({
      env: { RATE_LIMITS: JSON.stringify({ 'global.authenticated': { limit: 1, window_s: 3600 }, 'global.anonymous': { limit: 1, window_s: 3600 } }) },
    });
    limitedDoc = (await limited.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
  });
  afterAll(() => limited.close());

  it('once the global budget is spent, every operation that lists 429 answers it (Retry-After, RateLimit-*); the others still answer', async () => {
    const user = await createUser(limited, { role: 'ceo' });
    // One call spends each budget: the user's and the address's.
    expect((await limited.app.inject({ method: 'GET', url: '/api/v1/auth/me', headers: user.headers })).statusCode).toBe(200);
    expect((await limited.app.inject({ method: 'POST', url: '/api/v1/auth/logout' })).statusCode).toBe(204);
    for (const op of operationsOf(limitedDoc)) {
      const { status, detail, res } = await call(limited, limitedDoc, op, { headers: user.headers });
      if (op.statuses.includes(429)) {
        expect(status, label(op)).toBe(429);
        expect(detail?.error_code, label(op)).toBe(5000);
        expect(res.headers['ratelimit-limit'], label(op)).toBe('1');
      } else expect(status, label(op)).toBe(200);
    }
  });
});

describe('the database unreachable', () => {
  let starved: TestService;
  let starvedDoc: OpenApiDocument;
  let user: TestUser;
  beforeAll(async () => {
    starved = await startTestService({ env: { RATE_LIMITS_ENABLED: 'false', DB_POOL_MAX: '2', DB_ACQUIRE_TIMEOUT_MS: '1000' } });
    starvedDoc = (await starved.app.inject({ method: 'GET', url: '/api/v1/openapi.json' })).json();
    user = await createUser(starved, { role: 'ceo' });
  });
  afterAll(() => starved.close());

  it('every operation but the liveness probe answers a documented 503/8001 with Retry-After (login, setup, setup status and logout too)', async () => {
    const pool = await nativePool(starved.deps.orm);
    const held: pg.PoolClient[] = [];
    try {
      held.push(await pool.connect(), await pool.connect());
      const credentials = { ...user.headers, cookie: `refresh_token=${user.refreshToken}` };
      // Bodies that pass validation, so the operation gets as far as the database.
      const signIn = JSON.stringify({ username: 'someone', password: 'a password of some length' });
      // All at once: each waits DB_ACQUIRE_TIMEOUT_MS for a connection that never frees.
      const answers = await Promise.all(
        operationsOf(starvedDoc).map(async (op) => {
          const payload = op.path === '/auth/login' || op.path === '/auth/setup' ? signIn : '{}';
          return { op, ...(await call(starved, starvedDoc, op, { headers: credentials, payload })) };
        }),
      );
      for (const { op, status, detail, res } of answers) {
        if (op.path === '/healthz') {
          expect(status).toBe(200);
          continue;
        }
        expect(status, label(op)).toBe(503);
        expect(detail?.error_code, label(op)).toBe(8001);
        expect(res.headers['retry-after'], label(op)).toBeDefined();
      }
    } finally {
      for (const client of held) client.release();
    }
  });
});

describe('conditional requests and idempotent retries', () => {
  it('a stale If-Match is a documented 409/4002 on every operation that declares If-Match', async () => {
    const manager = await createUser(svc, { role: 'manager' });
    const target = await createUser(svc, { role: 'observer' });
    await ceo.caller.users.grantOrgRole({ user_id: target.id, role: 'editor' });
    const pending = await manager.caller.approvals.create({ action_type: 'deploy:production', title: 't', description: 'd', risk_level: 'low' });
    const requests: Record<string, Call> = {
      users_updateRole: { url: `/api/v1/users/${target.id}`, payload: '{"role":"manager"}' },
      users_delete: { url: `/api/v1/users/${target.id}` },
      users_grantOrgRole: { url: `/api/v1/users/${target.id}/org-roles`, payload: '{"role":"viewer"}' },
      users_revokeOrgRole: { url: `/api/v1/users/${target.id}/org-roles/editor` },
      approvals_approve: { url: `/api/v1/approvals/${pending.id}/approve` },
      approvals_reject: { url: `/api/v1/approvals/${pending.id}/reject`, payload: '{"reason":"no"}' },
    };
    const conditional = operations.filter((op) => op.sharedParameters.includes('IfMatch'));
    expect(conditional.map((op) => op.operationId).sort()).toEqual(Object.keys(requests).sort());
    for (const op of conditional) {
      const { status, detail } = await call(svc, doc, op, { ...requests[op.operationId], headers: { ...ceo.headers, 'if-match': '"stale"' } });
      expect(status, label(op)).toBe(409);
      expect(detail?.error_code, label(op)).toBe(4002);
    }
  });

  it('a repeated Idempotency-Key is answered again with Idempotent-Replayed, as documented', async () => {
    const provider = svc.deps.providers.providers[0];
    const model = provider?.models[0];
    if (!provider || !model) throw new Error('the default catalogue offers a model');
    const requests: Record<string, Call> = {
      users_create: { payload: JSON.stringify({ username: 'replayed_user', password: 'a long enough password', role: 'observer' }) },
      approvals_create: { payload: JSON.stringify({ action_type: 'deploy:staging', title: 't', description: 'd', risk_level: 'low' }) },
      setup_createAgent: { payload: JSON.stringify({ name: 'Ada', role: 'Engineer', model_provider: provider.name, model_id: model.id }) },
      reviews_decideStage: { url: '/api/v1/reviews/task-1/stages/code_review/decide', payload: '{"verdict":"pass","reason":null}' },
    };
    const idempotent = operations.filter((op) => op.sharedParameters.includes('IdempotencyKey'));
    expect(idempotent.map((op) => op.operationId).sort()).toEqual(Object.keys(requests).sort());
    for (const op of idempotent) {
      const req = { ...requests[op.operationId], headers: { ...ceo.headers, 'idempotency-key': `key-${op.operationId}` } };
      const first = await call(svc, doc, op, req);
      const again = await call(svc, doc, op, req);
      expect(first.status, `${label(op)}: ${first.res.body}`).toBe(201);
      expect(again.status, label(op)).toBe(201);
      expect(again.res.headers['idempotent-replayed'], label(op)).toBe('true');
      expect(again.res.body, label(op)).toBe(first.res.body);
    }
  });
});
