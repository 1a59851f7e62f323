// The app_setting table: the server secret, APP_SECRET when configured, else generated once and kept for every instance.
import { randomBytes } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { kysely } from '../../db/kysely.ts';

const KEY = 'app_secret';

export async function loadSecret(em: EntityManager, configured: string | undefined): Promise<Buffer> {
  if (configured !== undefined) return Buffer.from(configured, 'utf8');
  const db = kysely(em);
  // Insert-or-keep, so instances booting together agree on one secret.
  await db
    .insertInto('app_setting')
    .values({ key: KEY, value: randomBytes(32).toString('base64url'), createdAt: new Date() })
    .onConflict((oc) => oc.column('key').doNothing())
    .execute();
  const { value } = await db.selectFrom('app_setting').select('value').where('key', '=', KEY).executeTakeFirstOrThrow();
  return Buffer.from(value, 'base64url');
}
