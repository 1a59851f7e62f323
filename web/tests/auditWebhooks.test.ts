// The audit and webhooks pages' rules without the DOM (web/src/lib/audit.ts, web/src/lib/webhooks.ts): filters in
// the URL and the export's query string, where a target links, the event types a webhook is offered.
import { describe, expect, it } from 'vitest';
import { ListAuditInput } from '../../src/contracts/audit.ts';
import { WEBHOOK_EVENT_TYPES } from '../../src/contracts/webhooks.ts';
import { exportHref, fromSearch, isoOfLocalInput, localInputOf, targetHref, toFilters, toSearch } from '../src/lib/audit.ts';
import { coveredByChannel, EVENT_TYPE_CHOICES, eventGroups, toggled } from '../src/lib/webhooks.ts';

describe('the audit filters in the URL', () => {
  it('round-trip through the query string, only the ones set, and the export gets the same string', () => {
    const form = fromSearch('?type=auth.&actor=mia&since=2026-11-27T04%3A00%3A00.000Z&ignored=1');
    expect(form).toEqual({ type: 'auth.', actor: 'mia', target_id: '', since: '2026-11-27T04:00:00.000Z', until: '' });
    expect(toFilters(form)).toEqual({ type: 'auth.', actor: 'mia', since: '2026-11-27T04:00:00.000Z' });
    expect(toSearch(form)).toBe('?type=auth.&actor=mia&since=2026-11-27T04%3A00%3A00.000Z');
    expect(exportHref(form)).toBe('/api/v1/audit/export?type=auth.&actor=mia&since=2026-11-27T04%3A00%3A00.000Z');
    expect(toSearch(fromSearch(''))).toBe('');
    expect(exportHref(fromSearch(''))).toBe('/api/v1/audit/export');
  });

  it("give filters the API's ListAuditInput accepts, a local date-time turned into an ISO one", () => {
    const since = isoOfLocalInput('2026-11-27T09:30');
    expect(since).toBe(new Date('2026-11-27T09:30').toISOString());
    expect(localInputOf(since)).toBe('2026-11-27T09:30');
    expect(ListAuditInput.safeParse({ ...toFilters({ type: 'approval.', actor: '', target_id: ' ', since, until: '' }), limit: 50 }).success).toBe(true);
    expect(localInputOf('')).toBe('');
  });
});

describe('where an entry links', () => {
  it('a user to the users page, an approval to the queue, a task to its stages, anything else nowhere', () => {
    expect(targetHref('user', 'u-1')).toBe('/users#user-u-1');
    expect(targetHref('approval', 'a-1')).toBe('/approvals?status=all#approval-a-1');
    expect(targetHref('task', 't 1')).toBe('/reviews/t%201');
    expect(targetHref('session', 's-1')).toBeNull();
    expect(targetHref('company', null)).toBeNull();
  });
});

describe('the event types a webhook is offered', () => {
  it("are the API's own list, each once, grouped by channel with <channel>.* first", () => {
    expect([...EVENT_TYPE_CHOICES].sort()).toEqual([...WEBHOOK_EVENT_TYPES].sort());
    for (const group of eventGroups()) expect(group.types[0]).toBe(`${group.channel}.*`);
    expect(eventGroups().map((g) => g.channel)).toEqual(['approvals', 'reviews', 'users', 'setup']);
  });

  it('ticking keeps the order of the choices; a type under a ticked channel is covered', () => {
    const picked = toggled(toggled([], 'user.created', true), 'approvals.*', true);
    expect(picked).toEqual(['approvals.*', 'user.created']);
    expect(coveredByChannel(picked, 'approval.approved')).toBe(true);
    expect(coveredByChannel(picked, 'user.deleted')).toBe(false);
    expect(toggled(picked, 'approvals.*', false)).toEqual(['user.created']);
  });
});
