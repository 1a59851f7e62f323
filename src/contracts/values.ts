// Closed value sets the schemas offer and the entities hold with check constraints; plain arrays, no zod, so the
// dashboard's first chunk can carry them without the validation library.
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
export const VERDICTS = ['pass', 'fail', 'skip'] as const;
export type Verdict = (typeof VERDICTS)[number];
export const AGENT_LEVELS = ['junior', 'mid', 'senior', 'lead', 'principal', 'director', 'vp', 'c_suite'] as const;
