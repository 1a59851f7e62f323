// Closed value sets the entities hold with check constraints and the API schemas offer; no ORM import, so the dashboard bundles them.
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
export const VERDICTS = ['pass', 'fail', 'skip'] as const;
export type Verdict = (typeof VERDICTS)[number];
