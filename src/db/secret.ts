// The server secret: APP_SECRET when configured, else generated once and kept in the database for every instance.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

const KEY = 'app_secret';

export async function loadSecret(em: EntityManager, configured: string | undefined): Promise<Buffer> {
  if (configured !== undefined) return Buffer.from(configured, 'utf8');
  const connection = em.getConnection();
  // Insert-or-keep, so instances booting together agree on one secret.
  await connection.execute('insert into app_setting (key, value, created_at) values (?, ?, now()) on conflict (key) do nothing', [
    KEY,
    randomBytes(32).toString('base64url'),
  ]);
  const rows = await connection.execute<{ value: string }[]>('select value from app_setting where key = ?', [KEY]);
  const value = rows[0]?.value;
  if (value === undefined) throw new Error('could not read the server secret');
  return Buffer.from(value, 'base64url');
}
