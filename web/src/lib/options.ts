// The choices the forms offer: the API's own closed value sets from the wire vocabulary, never a copy (zod-free
// modules, so the first page does not carry the validation library).
export { ORG_ROLES, ROLES } from '../../../src/contracts/roles.ts';
export { AGENT_LEVELS as LEVELS, APPROVAL_STATUSES, RISK_LEVELS, VERDICTS } from '../../../src/contracts/values.ts';
