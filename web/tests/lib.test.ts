// The small rules behind the pages: failures, retries, idempotency keys, approval filters, who may decide, labels, models.
import { TRPCClientError } from '@trpc/client';
import { describe, expect, it } from 'vitest';
import type { AppRouter, ClientError, Problem } from '../../src/client/index.ts';
import { fromSearch, toListFilters, toSearch } from '../src/lib/approvalFilters.ts';
import { label, secondsLeft, timeLeft } from '../src/lib/format.ts';
import { IdempotencyKeys } from '../src/lib/idempotency.ts';
import { modelChoices, splitModel } from '../src/lib/models.ts';
import { describeFailure, retryText, shouldRetry, UNREACHABLE } from '../src/lib/problems.ts';
import { mayDecide } from '../src/lib/roles.ts';
import { APPROVAL_STATUSES, LEVELS, ORG_ROLES, RISK_LEVELS, ROLES, VERDICTS } from '../src/lib/options.ts';
import { CreateApprovalInput, DecideStageInput, GrantOrgRoleInput, ListApprovalsInput, SetupAgentRequest, UserRole } from '../src/api/schemas.ts';

function failed(problem: Partial<Problem> & { status: number }): ClientError {
  const full: Problem = {
    type: 'http://x/docs/errors#x',
    title: 'T',
    detail: 'the detail',
    instance: 'req-1',
    error_code: 2000,
    error_category: 'validation',
    retryable: false,
    retry_after: null,
    ...problem,
  };
  return new TRPCClientError<AppRouter>(full.detail, {
    result: { error: { code: -32600, message: full.detail, data: { code: 'BAD_REQUEST', httpStatus: full.status, path: 'test', problem: full } } },
  });
}

describe('describeFailure', () => {
  it("shows the ProblemDetail's detail", () => {
    expect(describeFailure(failed({ status: 409, detail: 'approval is not pending' }))).toEqual({ message: 'approval is not pending', status: 409, retryAfter: null });
  });

  it('says when to retry a rate-limited call', () => {
    const f = describeFailure(failed({ status: 429, error_code: 5001, retryable: true, retry_after: 42, detail: 'too many requests' }));
    expect(f).toEqual({ message: 'too many requests', status: 429, retryAfter: 42 });
    expect(retryText(42)).toBe('Try again in 42 seconds.');
    expect(retryText(1)).toBe('Try again in 1 second.');
    expect(retryText(0.2)).toBe('Try again in 1 second.');
    expect(retryText(600)).toBe('Try again in 10 minutes.');
  });

  it('says the service was unreachable when there was no answer', () => {
    expect(describeFailure(new TRPCClientError('fetch failed'))).toEqual({ message: UNREACHABLE, status: null, retryAfter: null });
    expect(describeFailure(new Error('boom')).message).toBe(UNREACHABLE);
  });
});

describe('shouldRetry', () => {
  it('retries only unanswered calls and 503s without retry_after, at most twice', () => {
    expect(shouldRetry(0, new TRPCClientError('fetch failed'))).toBe(true);
    expect(shouldRetry(0, failed({ status: 503, error_code: 8001 }))).toBe(true);
    expect(shouldRetry(2, new TRPCClientError('fetch failed'))).toBe(false);
    for (const status of [400, 401, 403, 404, 409]) expect(shouldRetry(0, failed({ status }))).toBe(false);
    expect(shouldRetry(0, failed({ status: 429, retryable: true, retry_after: 5 }))).toBe(false);
  });
});

describe('IdempotencyKeys', () => {
  const counter = () => {
    let n = 0;
    return () => `key-${String(++n)}`;
  };

  it('a repeated submission of the same body reuses its key (a double click or a retry is replayed, not repeated)', () => {
    const keys = new IdempotencyKeys(counter());
    expect(keys.keyFor({ title: 'a' })).toBe('key-1');
    expect(keys.keyFor({ title: 'a' })).toBe('key-1');
  });

  it('a changed body gets a new key (the server refuses one key with two bodies)', () => {
    const keys = new IdempotencyKeys(counter());
    keys.keyFor({ title: 'a' });
    expect(keys.keyFor({ title: 'b' })).toBe('key-2');
  });

  it('after a success the same body is a new resource', () => {
    const keys = new IdempotencyKeys(counter());
    keys.keyFor({ title: 'a' });
    keys.settled();
    expect(keys.keyFor({ title: 'a' })).toBe('key-2');
  });
});

describe('approval filters in the URL', () => {
  it('open on pending; round-trip through the query string', () => {
    expect(fromSearch('')).toEqual({ status: 'pending', risk: 'any', action: '' });
    const form = { status: 'all', risk: 'critical', action: 'deploy:prod' } as const;
    expect(fromSearch(toSearch(form))).toEqual(form);
    expect(toSearch({ status: 'pending', risk: 'any', action: '  ' })).toBe('');
  });

  it('ignore values that are not filters', () => {
    expect(fromSearch('?status=maybe&risk=extreme')).toEqual({ status: 'pending', risk: 'any', action: '' });
  });

  it('send only the filters that are set', () => {
    expect(toListFilters({ status: 'all', risk: 'any', action: '' })).toEqual({});
    expect(toListFilters({ status: 'expired', risk: 'high', action: ' a:b ' })).toEqual({ status: 'expired', risk_level: 'high', action_type: 'a:b' });
  });
});

describe('mayDecide', () => {
  const pending = { requested_by: 'Mia', status: 'pending' };
  it('approvers decide pending requests of others', () => {
    for (const role of ['ceo', 'manager', 'board_member']) expect(mayDecide({ username: 'boss', role }, pending)).toBe(true);
  });
  it('nobody decides their own request (usernames compare case-insensitively)', () => {
    expect(mayDecide({ username: 'mia', role: 'manager' }, pending)).toBe(false);
  });
  it('other roles and decided requests offer no decision', () => {
    expect(mayDecide({ username: 'boss', role: 'observer' }, pending)).toBe(false);
    expect(mayDecide({ username: 'boss', role: 'pair_programmer' }, pending)).toBe(false);
    expect(mayDecide({ username: 'boss', role: 'ceo' }, { ...pending, status: 'approved' })).toBe(false);
  });
});

describe('formatting', () => {
  it('time left reads in the largest sensible units', () => {
    expect(timeLeft(42)).toBe('42 s');
    expect(timeLeft(600)).toBe('10 min');
    expect(timeLeft(7200)).toBe('2 h');
    expect(timeLeft(7260)).toBe('2 h 1 min');
    expect(timeLeft(3 * 86400 + 3600)).toBe('3 d 1 h');
    expect(timeLeft(-5)).toBe('0 s');
  });

  it('seconds left count down from when the approval was read', () => {
    expect(secondsLeft(600, 61_000)).toBe(539);
    expect(secondsLeft(10, 60_000)).toBe(0);
  });

  it('labels identifiers', () => {
    expect(label('pair_programmer')).toBe('Pair programmer');
    expect(label('ceo')).toBe('CEO');
  });
});

describe('modelChoices', () => {
  it('offers each provider/model of the roster once, largest tier first', () => {
    const agents = [
      { model_provider: 'openai', model_id: 'gpt-5-mini', tier: 'medium' },
      { model_provider: 'anthropic', model_id: 'claude-opus-4-1', tier: 'large' },
      { model_provider: 'openai', model_id: 'gpt-5-mini', tier: 'medium' },
    ];
    expect(modelChoices(agents).map((c) => c.value)).toEqual(['anthropic/claude-opus-4-1', 'openai/gpt-5-mini']);
    expect(splitModel('local/llama-3.3-70b-instruct')).toEqual({ model_provider: 'local', model_id: 'llama-3.3-70b-instruct' });
  });
});

describe('the choices forms offer', () => {
  it("are exactly the API's enums", () => {
    expect(ROLES).toEqual(UserRole.options);
    expect(ORG_ROLES).toEqual(GrantOrgRoleInput.shape.role.options);
    expect(VERDICTS).toEqual(DecideStageInput.shape.verdict.options);
    expect(LEVELS).toEqual(SetupAgentRequest.shape.level.unwrap().options);
    expect(RISK_LEVELS).toEqual(CreateApprovalInput.shape.risk_level.options);
    expect(APPROVAL_STATUSES).toEqual(ListApprovalsInput.shape.status.unwrap().unwrap().options);
  });
});
