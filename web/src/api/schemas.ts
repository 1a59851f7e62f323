// The API's own input schemas from the wire vocabulary (src/contracts, which imports only zod), so every form checks the limits the server checks.
export { ChangePasswordRequest, LoginRequest, SetupRequest } from '../../../src/contracts/auth.ts';
export { CreateUserInput, GrantOrgRoleInput, OrgRole, UserRole } from '../../../src/contracts/users.ts';
export { SetupAgentRequest, SetupCompanyRequest, UpdateAgentNameInput } from '../../../src/contracts/setup.ts';
export { ApproveInput, CreateApprovalInput, ListApprovalsInput, RejectInput } from '../../../src/contracts/approvals.ts';
export { DecideStageInput } from '../../../src/contracts/reviews.ts';
export { CreateApiKeyInput } from '../../../src/contracts/apiKeys.ts';
export { ListAuditInput } from '../../../src/contracts/audit.ts';
export { CreateWebhookInput, UpdateWebhookInput } from '../../../src/contracts/webhooks.ts';
