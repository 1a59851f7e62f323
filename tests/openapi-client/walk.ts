// A third-party client of agent-org: openapi-fetch on the types openapi-typescript generated from the served document.
// tests/openapi.client.test.ts copies it next to the generated `api.ts`, type-checks it with tsc --strict and runs it
// against a live server (AGENT_ORG_API = the document's server URL); every exchange is written to RECORD_FILE.
import { writeFileSync } from 'node:fs';
import createClient from 'openapi-fetch';
import type { paths } from './api.ts';

type Exchange = { method: string; url: string; status: number; headers: Record<string, string | string[]>; body: string };
const exchanges: Exchange[] = [];

const baseUrl = process.env.AGENT_ORG_API;
const recordFile = process.env.RECORD_FILE;
if (baseUrl === undefined || recordFile === undefined) throw new Error('AGENT_ORG_API and RECORD_FILE must be set');

const api = createClient<paths>({
  baseUrl,
  // Keeps what the server said for the test to hold against the document.
  fetch: async (request) => {
    const response = await fetch(request);
    const headers: Record<string, string | string[]> = {};
    response.headers.forEach((value, name) => {
      if (name !== 'set-cookie') headers[name] = value;
    });
    const cookies = response.headers.getSetCookie();
    if (cookies.length > 0) headers['set-cookie'] = cookies;
    const url = new URL(request.url);
    exchanges.push({ method: request.method, url: url.pathname + url.search, status: response.status, headers, body: await response.clone().text() });
    return response;
  },
});

/** The error code of an error body, in either format the document gives it: the envelope or a bare ProblemDetail. */
function errorCode(error: { error_detail: { error_code: number } } | { error_code: number } | undefined): number | undefined {
  if (error === undefined) return undefined;
  return 'error_detail' in error ? error.error_detail.error_code : error.error_code;
}

function check(condition: unknown, what: string): asserts condition {
  if (!condition) throw new Error(`walk failed: ${what}`);
}

/** The access token from the `session` cookie that login, setup and change-password set: a non-browser client sends it as a bearer. */
function bearerFrom(response: Response): { Authorization: string } {
  const cookie = response.headers.getSetCookie().find((c) => c.startsWith('session='));
  const token = cookie?.slice('session='.length).split(';')[0];
  check(token, 'the session cookie is set');
  return { Authorization: `Bearer ${token}` };
}

const CEO = { username: 'chief', password: 'correct horse battery staple' };
const MANAGER = { username: 'manny', password: 'initial password 1', changed: 'a better password 2' };

// First-run setup, then sign in.
const status = await api.GET('/setup/status');
check(status.data?.data.needs_admin === true, 'a new service needs its first user');
const setup = await api.POST('/auth/setup', { body: CEO });
check(setup.response.status === 201 && setup.data?.data.user.role === 'ceo', 'setup creates the CEO');
const login = await api.POST('/auth/login', { body: CEO });
check(login.data?.data.must_change_password === false, 'the CEO signs in');
const ceo = bearerFrom(login.response);
const me = await api.GET('/auth/me', { headers: ceo });
check(me.data?.data.username === CEO.username, 'me is the CEO');

// Users: create (retry-safe), read with its ETag, change the role on that ETag, page through the list.
const created = await api.POST('/users', {
  params: { header: { 'Idempotency-Key': 'walk-user-1' } },
  headers: ceo,
  body: { username: MANAGER.username, password: MANAGER.password, role: 'manager' },
});
check(created.response.status === 201 && created.data, 'a user is created');
const managerId: string = created.data.data.id;
check(created.response.headers.get('location') === `/api/v1/users/${managerId}`, 'Location names the new user');
const fetched = await api.GET('/users/{user_id}', { params: { path: { user_id: managerId } }, headers: ceo });
const userTag = fetched.response.headers.get('etag');
check(fetched.data?.data.must_change_password === true && userTag, 'the new user must change the password; the read has an ETag');
const patched = await api.PATCH('/users/{user_id}', {
  params: { path: { user_id: managerId }, header: { 'If-Match': userTag } },
  headers: ceo,
  body: { role: 'board_member' },
});
check(patched.data?.data.role === 'board_member', 'the role changes on a fresh ETag');
const firstPage = await api.GET('/users', { params: { query: { limit: 1 } }, headers: ceo });
const cursor = firstPage.data?.pagination.next_cursor;
check(firstPage.data?.pagination.has_more === true && cursor, 'two users make two pages of one');
const secondPage = await api.GET('/users', { params: { query: { limit: 1, cursor } }, headers: ceo });
check(secondPage.data?.data.length === 1 && secondPage.data.pagination.has_more === false, 'the second page is the last');

// The wizard: locales, a company from a template, agent edits, a new agent, completion.
const templates = await api.GET('/setup/templates', { headers: ceo });
check(templates.data?.data.some((t) => t.name === 'startup'), 'the startup template is offered');
const providers = await api.GET('/setup/providers', { headers: ceo });
const provider = providers.data?.data.providers[0];
const model = provider?.models[0];
check(provider && model, 'the catalogue offers a model');
const available = await api.GET('/setup/name-locales/available', { headers: ceo });
check(available.data?.data.display_names.en_US, 'en_US is an available locale');
const locales = await api.PUT('/setup/name-locales', { headers: ceo, body: { locales: ['en_US', 'de_DE'] } });
check(locales.data?.data.locales.length === 2, 'two locales chosen');
const company = await api.POST('/setup/company', { headers: ceo, body: { company_name: 'Acme', template_name: 'startup' } });
check(company.response.status === 201 && (company.data?.data.agent_count ?? 0) > 0, 'the template builds a roster');
const roster = await api.GET('/setup/agents', { params: { query: { limit: 200 } }, headers: ceo });
check(roster.data?.data.length === company.data?.data.agent_count, 'the roster lists every agent');
const personality = await api.PUT('/setup/agents/{agent_index}/personality', {
  params: { path: { agent_index: 0 } },
  headers: ceo,
  body: { personality_preset: 'systems_thinker' },
});
check(personality.data?.data.personality_preset === 'systems_thinker', 'an agent gets another preset');
const renamed = await api.POST('/setup/agents/{agent_index}/randomize-name', { params: { path: { agent_index: 0 } }, headers: ceo });
check(renamed.data?.data.name, 'an agent gets a random name');
const presets = await api.GET('/setup/personality-presets', { params: { query: { limit: 5 } }, headers: ceo });
check(presets.data?.data.length === 5, 'presets page by five');
const agent = await api.POST('/setup/agent', {
  params: { header: { 'Idempotency-Key': 'walk-agent-1' } },
  headers: ceo,
  body: { name: 'Ada Lovelace', role: 'Engineer', model_provider: provider.name, model_id: model.id },
});
check(agent.response.status === 201 && agent.data?.data.model_id === model.id, 'an agent is added');
const completed = await api.POST('/setup/complete', { headers: ceo });
check(completed.response.status === 201 && completed.data?.data.setup_complete === true, 'the wizard completes');
const company2 = await api.GET('/setup/company', { headers: ceo });
check(company2.data?.data.company_name === 'Acme', 'the company reads back');

// The new user signs in and must change the initial password first.
const managerLogin = await api.POST('/auth/login', { body: { username: MANAGER.username, password: MANAGER.password } });
check(managerLogin.data?.data.must_change_password === true, 'the new user must change the password');
const refused = await api.GET('/approvals', { headers: bearerFrom(managerLogin.response) });
check(refused.response.status === 403, 'everything else waits for the password change');
const changed = await api.POST('/auth/change-password', {
  headers: bearerFrom(managerLogin.response),
  body: { current_password: MANAGER.password, new_password: MANAGER.changed },
});
check(changed.data?.data.must_change_password === false, 'the password is changed');
const manager = bearerFrom(changed.response);

// Approvals: the CEO asks, the board member approves on the approval's ETag with no body at all.
const requested = await api.POST('/approvals', {
  params: { header: { 'Idempotency-Key': 'walk-approval-1' } },
  headers: ceo,
  body: { action_type: 'deploy:production', title: 'Ship 1.0', description: 'Release the first version.', risk_level: 'high', ttl_seconds: 3600 },
});
check(requested.response.status === 201 && requested.data, 'an approval is requested');
const approvalId = requested.data.data.id;
check(requested.response.headers.get('location') === `/api/v1/approvals/${approvalId}`, 'Location names the approval');
const ownDecision = await api.POST('/approvals/{approval_id}/approve', { params: { path: { approval_id: approvalId } }, headers: ceo });
check(errorCode(ownDecision.error) === 1001, 'nobody approves their own request');
const read = await api.GET('/approvals/{approval_id}', { params: { path: { approval_id: approvalId } }, headers: manager });
const approvalTag = read.response.headers.get('etag');
check(read.data?.data.status === 'pending' && approvalTag, 'the approval is pending and has an ETag');
const approved = await api.POST('/approvals/{approval_id}/approve', {
  params: { path: { approval_id: approvalId }, header: { 'If-Match': approvalTag } },
  headers: manager,
});
check(approved.data?.data.status === 'approved' && approved.data.data.decided_by === MANAGER.username, 'the approval is approved');
const approvedList = await api.GET('/approvals', { params: { query: { status: 'approved', risk_level: 'high' } }, headers: ceo });
check(approvedList.data?.data.some((a) => a.id === approvalId), 'the list filters by status and risk');

// Reviews: a stage decision, then the task's decisions.
const decided = await api.POST('/reviews/{task_id}/stages/{stage_name}/decide', {
  params: { path: { task_id: 'task-42', stage_name: 'code_review' }, header: { 'Idempotency-Key': 'walk-review-1' } },
  headers: ceo,
  body: { verdict: 'pass', reason: 'Looks good.' },
});
check(decided.response.status === 201 && decided.data?.data.verdict === 'pass', 'a stage is decided');
const stages = await api.GET('/reviews/{task_id}/stages', { params: { path: { task_id: 'task-42' } }, headers: ceo });
check(stages.data?.data.length === 1, 'the task has one decision');

// Sign out: the session ends, the token stops working.
const loggedOut = await api.POST('/auth/logout', { headers: manager });
check(loggedOut.response.status === 204, 'logout answers 204');
const after = await api.GET('/auth/me', { headers: manager });
check(errorCode(after.error) === 1002, 'a logged-out token is refused with 1002');

writeFileSync(recordFile, JSON.stringify(exchanges));
console.log(`walked ${String(exchanges.length)} requests`);
