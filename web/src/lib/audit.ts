// The audit page's filters as they live in the URL (?type=&actor=&target_id=&since=&until=), the same query string
// for the list and the NDJSON export, and where an entry's target is shown on the dashboard (CONTRACT §4.13).
import type { ActorType } from '../../../src/contracts/audit.ts';

export type AuditFilterForm = { type: string; actor: string; target_id: string; since: string; until: string };
/** The input of audit.list without paging: only the filters that are set, so equal filters make equal query keys. */
export type AuditFilters = Partial<AuditFilterForm>;

const FIELDS = ['type', 'actor', 'target_id', 'since', 'until'] as const;

/** A few type prefixes worth offering; any type or prefix ending in `.` may be typed. */
export const TYPE_SUGGESTIONS = ['auth.', 'approval.', 'user.', 'api_key.', 'webhook.', 'mfa.', 'session.', 'admin.', 'auth.login_failed'] as const;

export function fromSearch(search: string): AuditFilterForm {
  const q = new URLSearchParams(search);
  return { type: q.get('type') ?? '', actor: q.get('actor') ?? '', target_id: q.get('target_id') ?? '', since: q.get('since') ?? '', until: q.get('until') ?? '' };
}

export function toFilters(form: AuditFilterForm): AuditFilters {
  const filters: AuditFilters = {};
  for (const field of FIELDS) {
    const value = form[field].trim();
    if (value !== '') filters[field] = value;
  }
  return filters;
}

/** `?type=auth.&actor=ceo`, or '' without filters: the page's URL and the export's. */
export function toSearch(form: AuditFilterForm): string {
  const q = new URLSearchParams(toFilters(form));
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

export function exportHref(form: AuditFilterForm): string {
  return `/api/v1/audit/export${toSearch(form)}`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** An ISO date-time as `<input type="datetime-local">` shows it, in the browser's zone ('' when not a date). */
export function localInputOf(iso: string): string {
  const d = new Date(iso);
  if (iso === '' || Number.isNaN(d.getTime())) return '';
  return `${String(d.getFullYear())}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** What a datetime-local input holds (local time) as the ISO date-time the API takes; '' stays ''. */
export function isoOfLocalInput(value: string): string {
  if (value.trim() === '') return '';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : d.toISOString();
}

/** Where the dashboard shows what an entry is about; null when it has no page for it. */
export function targetHref(targetType: string | null, targetId: string | null): string | null {
  if (targetId === null) return null;
  if (targetType === 'user') return `/users#user-${encodeURIComponent(targetId)}`;
  if (targetType === 'approval') return `/approvals?status=all#approval-${encodeURIComponent(targetId)}`;
  if (targetType === 'task') return `/reviews/${encodeURIComponent(targetId)}`;
  return null;
}

/** The marker beside an actor that was not a signed-in person (CONTRACT §4.13 actor_type). */
export const ACTOR_MARKERS: Record<ActorType, string | null> = {
  user: null,
  api_key: 'API key',
  system: 'system',
  admin: 'admin',
};

/** `data` on one line, cut short for the list (the whole object is one click away). */
export function compactData(data: Record<string, unknown>, max = 100): string {
  const text = JSON.stringify(data);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** Who may read the log (CONTRACT §4.13): the CEO and board members. */
export const canReadAudit = (role: string): boolean => role === 'ceo' || role === 'board_member';
