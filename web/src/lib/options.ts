// The choices the forms offer, typed from the API's inputs: the compiler refuses a list that misses or invents a value.
import type { RouterInputs } from '../../../src/client/index.ts';

/** `list` itself, provided it names every member of T (a missing one demands a second argument, a foreign one is refused). */
export function everyOf<T extends string>() {
  return <const L extends readonly T[]>(list: L, ..._missing: Exclude<T, L[number]> extends never ? [] : [missing: Exclude<T, L[number]>]): L => list;
}

export const ROLES = everyOf<RouterInputs['users']['create']['role']>()(['ceo', 'manager', 'board_member', 'pair_programmer', 'observer']);
export const ORG_ROLES = everyOf<RouterInputs['users']['grantOrgRole']['role']>()(['owner', 'department_admin', 'editor', 'viewer']);
export const VERDICTS = everyOf<RouterInputs['reviews']['decideStage']['verdict']>()(['pass', 'fail', 'skip']);
export const LEVELS = everyOf<NonNullable<RouterInputs['setup']['createAgent']['level']>>()([
  'junior',
  'mid',
  'senior',
  'lead',
  'principal',
  'director',
  'vp',
  'c_suite',
]);
export const APPROVAL_STATUSES = everyOf<NonNullable<RouterInputs['approvals']['list']['status']>>()(['pending', 'approved', 'rejected', 'expired']);
export const RISK_LEVELS = everyOf<RouterInputs['approvals']['create']['risk_level']>()(['low', 'medium', 'high', 'critical']);
