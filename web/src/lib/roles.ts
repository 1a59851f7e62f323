// Who may do what in the UI: the guards of CONTRACT §3.1, so pages show only the actions that will be allowed.
export type Role = 'ceo' | 'manager' | 'board_member' | 'pair_programmer' | 'observer';

export const canDecideApprovals = (role: string): boolean => role === 'ceo' || role === 'manager' || role === 'board_member';
export const canRequestApprovals = (role: string): boolean => role === 'ceo' || role === 'manager' || role === 'pair_programmer';
export const canDecideStages = canRequestApprovals;
export const isCeo = (role: string): boolean => role === 'ceo';

/** An approval can be decided by this user: an approver, and not the one who asked (CONTRACT §3.1). */
export function mayDecide(me: { username: string; role: string }, approval: { requested_by: string; status: string }): boolean {
  return approval.status === 'pending' && canDecideApprovals(me.role) && approval.requested_by.toLowerCase() !== me.username.toLowerCase();
}
