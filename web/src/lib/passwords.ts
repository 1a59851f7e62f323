// The password policy in words (CONTRACT §3.4), for the hints of every form that sets a password.
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../../src/contracts/passwords.ts';

/** `whose` names the username the password must not contain: the person's own, or the new user's. */
export function passwordPolicy(whose: 'your' | 'the', min: number = MIN_PASSWORD_LENGTH): string {
  return `${String(min)} to ${String(MAX_PASSWORD_LENGTH)} characters, not a commonly used password, and not containing ${whose} username.`;
}
