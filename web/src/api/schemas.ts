// The API's own input schemas, so every form checks the limits the server checks (bundled by build/serverSchemas.ts).
export { ChangePasswordRequest, LoginRequest, SetupRequest } from '../../../src/routers/auth/schemas.ts';
export { CreateUserInput, GrantOrgRoleInput, OrgRole, UserRole } from '../../../src/routers/users/schemas.ts';
export { SetupAgentRequest, SetupCompanyRequest, UpdateAgentNameInput } from '../../../src/routers/setup/schemas.ts';
export { ApproveInput, CreateApprovalInput, ListApprovalsInput, RejectInput } from '../../../src/routers/approvals/schemas.ts';
export { DecideStageInput } from '../../../src/routers/reviews/schemas.ts';
