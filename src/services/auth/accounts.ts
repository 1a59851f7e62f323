// Creating user accounts, shared by first-run setup and user administration; uniqueness is the database's job.
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { Deps } from '../../context/deps.ts';
import { sqlRows } from '../../db/sql.ts';
import { ApiError } from '../../errors.ts';
import type { Role } from './guards.ts';
import { assertPasswordPolicy, hashPassword } from './passwords.ts';
import { usernameKey, usernameSkeletonKey } from './usernames.ts';

export type UserRow = {
  id: string;
  username: string;
  password_hash: string;
  role: Role;
  must_change_password: boolean;
  created_at: Date;
  updated_at: Date;
};

export async function insertUser(
  em: EntityManager,
  deps: Deps,
  input: { username: string; password: string; role: Role; mustChangePassword: boolean },
): Promise<UserRow> {
  // Stored the way the request schema normalises it, whoever calls (CONTRACT §3.4).
  const username = input.username.trim().normalize('NFC');
  assertPasswordPolicy(input.password, username);
  const passwordHash = await hashPassword(input.password);
  const now = deps.clock.now();
  try {
    const [row] = await sqlRows<UserRow>(
      em,
      `insert into users (id, username, username_key, username_skeleton, password_hash, role, must_change_password, created_at, updated_at)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?) returning *`,
      [randomUUID(), username, usernameKey(username), usernameSkeletonKey(username), passwordHash, input.role, input.mustChangePassword, now, now],
    );
    if (!row) throw new Error('insert returned no row');
    return row;
  } catch (error) {
    throw uniqueViolation(error) ?? error;
  }
}

/** Maps the users table's unique violations to the contract's conflicts. */
export function uniqueViolation(error: unknown): ApiError | undefined {
  if (!(error instanceof UniqueConstraintViolationException)) return undefined;
  if (error.message.includes('users_one_ceo')) return ApiError.conflict('there is already a CEO');
  if (error.message.includes('users_username_key_unique') || error.message.includes('users_username_skeleton_unique')) {
    return ApiError.duplicate('username is already taken');
  }
  return undefined;
}

export async function findUserByUsername(em: EntityManager, username: string): Promise<UserRow | undefined> {
  const [row] = await sqlRows<UserRow>(em, 'select * from users where username_key = ?', [usernameKey(username)]);
  return row;
}

export async function findUserById(em: EntityManager, id: string): Promise<UserRow | undefined> {
  const [row] = await sqlRows<UserRow>(em, 'select * from users where id = ?', [id]);
  return row;
}

export async function orgRolesOf(em: EntityManager, userId: string): Promise<{ org_roles: string[]; scoped_departments: string[] }> {
  const rows = await sqlRows<{ role: string; scoped_departments: string[] }>(
    em,
    'select role, scoped_departments from user_org_roles where user_id = ? order by role',
    [userId],
  );
  return { org_roles: rows.map((r) => r.role), scoped_departments: [...new Set(rows.flatMap((r) => r.scoped_departments))].sort() };
}
