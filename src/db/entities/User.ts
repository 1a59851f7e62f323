// Users: one role each, case-insensitively unique usernames, at most one CEO (enforced by the database).
import { defineEntity, p } from '@mikro-orm/core';
import type { Role } from '../../contracts/roles.ts';
import type { UserKind } from '../../contracts/users.ts';

export const UserSchema = defineEntity({
  name: 'User',
  tableName: 'users',
  properties: {
    id: p.uuid().primary(),
    username: p.string().length(128),
    /** SHA-256 of the NFKC_Casefold form: the uniqueness and login key (CONTRACT §3.4). */
    usernameKey: p.string().length(128).unique('users_username_key_unique'),
    /** SHA-256 of the TR39 confusable skeleton: a look-alike of an existing name is a duplicate. */
    usernameSkeleton: p.string().length(64).unique('users_username_skeleton_unique'),
    /** Argon2id PHC string; null exactly for a service account, which has no password (users_kind_password_check). */
    passwordHash: p.text().nullable(),
    // Typed as the roles users_role_check admits, so stored rows read as Role.
    role: p.string().length(32).$type<Role>(),
    /** A person, or a program that acts only through API keys (CONTRACT §3.5). */
    kind: p.string().length(16).$type<UserKind>().default('human'),
    mustChangePassword: p.boolean().default(false),
    /**
     * Two-factor authentication is on (CONTRACT §3.6): the key in user_totp was confirmed (until then it is pending).
     * A column of the user, so the session lookup and every user read carry it with no join; only services/mfa turns it on or off.
     */
    mfaEnabled: p.boolean().default(false),
    /**
     * When the CEO or an operator set the current password, which the user must replace; null once the user
     * chose one. Such a password signs in for TEMP_PASSWORD_TTL_S after this (CONTRACT §3.7).
     */
    temporaryPasswordSetAt: p.datetime(3).nullable(),
    createdAt: p.datetime(3),
    updatedAt: p.datetime(3),
  },
  indexes: [
    { name: 'users_created_at_id_idx', properties: ['createdAt', 'id'] },
    // Exactly one CEO: a partial unique index, so a concurrent second CEO loses in the database.
    { name: 'users_one_ceo', expression: `create unique index "users_one_ceo" on "users" ("role") where "role" = 'ceo'` },
  ],
  checks: [
    { name: 'users_role_check', expression: `role in ('ceo', 'manager', 'board_member', 'pair_programmer', 'observer')` },
    { name: 'users_kind_check', expression: `kind in ('human', 'service')` },
    // A person has a password, a program never has one: nothing can sign in as a service account.
    { name: 'users_kind_password_check', expression: `(kind = 'service') = (password_hash is null)` },
  ],
});
export class User extends UserSchema.class {}
UserSchema.setClass(User);
