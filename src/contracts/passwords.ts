// The password length bounds of CONTRACT §3.4, shared by the request schemas, the policy and setup status.
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_PASSWORD_LENGTH = 128;
