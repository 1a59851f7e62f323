// Closed value sets of approvals and review verdicts: the API schemas offer them and the entities hold them with check constraints.
export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
export type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];
export const RISK_LEVELS = ['low', 'medium', 'high', 'critical'] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];
export const VERDICTS = ['pass', 'fail', 'skip'] as const;
export type Verdict = (typeof VERDICTS)[number];
