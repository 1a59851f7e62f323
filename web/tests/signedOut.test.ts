// Signing out drops the session's cached answers and keeps what the shell needs to choose the page.
import { describe, expect, it } from 'vitest';
import { keys } from '../src/api/keys.ts';
import { queryClient } from '../src/api/queryClient.ts';
import { signedOut } from '../src/api/trpc.ts';

describe('signedOut', () => {
  it("keeps the setup status (the organization's, so the page stays mounted), nulls me and the two-factor status, drops the rest", () => {
    queryClient.setQueryData(keys.setupStatus, { needs_admin: true });
    queryClient.setQueryData(keys.me, { id: 'u1' });
    queryClient.setQueryData(keys.mfa, { totp_enabled: false });
    queryClient.setQueryData(keys.templates, [{ id: 't1' }]);
    signedOut(null);
    expect(queryClient.getQueryData(keys.setupStatus)).toEqual({ needs_admin: true });
    expect(queryClient.getQueryData(keys.me)).toBeNull();
    expect(queryClient.getQueryData(keys.mfa)).toBeNull();
    expect(queryClient.getQueryCache().find({ queryKey: keys.templates })).toBeUndefined();
  });
});
