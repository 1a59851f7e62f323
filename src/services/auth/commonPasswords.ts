// The common-password list of CONTRACT §3.7: zxcvbn-ts's password dictionary, looked up case-insensitively.
import { dictionary } from '@zxcvbn-ts/language-common';

// Built once when the module loads, so every check is one Set lookup, never a scan of the list. The
// package's entries are lower case already; folding them again keeps the lookup right if that changes.
const COMMON = new Set(dictionary['passwords-common'].map((password) => password.toLowerCase()));

/** Whether the password is on the list, ignoring case. */
export function isCommonPassword(password: string): boolean {
  return COMMON.has(password.toLowerCase());
}
