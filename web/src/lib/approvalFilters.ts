// The approvals queue's filters as they live in the URL (?status=&risk=&action=), so a filtered queue can be shared and survives reload.
import { APPROVAL_STATUSES, RISK_LEVELS } from './options.ts';

export const STATUSES = APPROVAL_STATUSES;
export const RISKS = RISK_LEVELS;

type Status = (typeof STATUSES)[number];
type Risk = (typeof RISKS)[number];

export type FilterForm = { status: Status | 'all'; risk: Risk | 'any'; action: string };
export type ListFilters = { status?: Status; risk_level?: Risk; action_type?: string };

const isStatus = (v: string | null): v is Status => STATUSES.some((s) => s === v);
const isRisk = (v: string | null): v is Risk => RISKS.some((r) => r === v);

/** The queue opens on pending approvals; `?status=all` shows every status. */
export function fromSearch(search: string): FilterForm {
  const q = new URLSearchParams(search);
  const status = q.get('status');
  const risk = q.get('risk');
  return {
    status: status === 'all' ? 'all' : isStatus(status) ? status : 'pending',
    risk: isRisk(risk) ? risk : 'any',
    action: q.get('action') ?? '',
  };
}

export function toSearch(form: FilterForm): string {
  const q = new URLSearchParams();
  if (form.status !== 'pending') q.set('status', form.status);
  if (form.risk !== 'any') q.set('risk', form.risk);
  if (form.action.trim() !== '') q.set('action', form.action.trim());
  const s = q.toString();
  return s === '' ? '' : `?${s}`;
}

/** The input of approvals.list: only the filters that are set, so equal filters make equal query keys. */
export function toListFilters(form: FilterForm): ListFilters {
  const filters: ListFilters = {};
  if (form.status !== 'all') filters.status = form.status;
  if (form.risk !== 'any') filters.risk_level = form.risk;
  if (form.action.trim() !== '') filters.action_type = form.action.trim();
  return filters;
}
