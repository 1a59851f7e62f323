// The choices the forms offer: the API's own closed value sets from the wire vocabulary, never a copy.
export { ORG_ROLES, ROLES } from '../../../src/contracts/roles.ts';
export { APPROVAL_STATUSES, RISK_LEVELS, VERDICTS } from '../../../src/contracts/values.ts';
export { AGENT_LEVELS as LEVELS } from '../../../src/contracts/catalogue.ts';
