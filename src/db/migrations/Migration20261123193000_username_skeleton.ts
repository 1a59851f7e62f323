// Usernames rev. 2: the key becomes a digest of NFKC_Casefold, and a unique confusable-skeleton digest is added.
import { Migration } from '@mikro-orm/migrations';
import { z } from 'zod';
import { usernameKey, usernameSkeletonKey } from '../../services/auth/usernameKeys.ts';

const UserRows = z.array(z.object({ id: z.string(), username: z.string() }));

export class Migration20261123193000_username_skeleton extends Migration {

  override name = 'Migration20261123193000_username_skeleton';

  override async up(): Promise<void> {
    this.addSql(`alter table "users" add column "username_skeleton" varchar(64) null;`);
    // Existing rows get their new keys computed here: PostgreSQL has no full case folding or TR39 data.
    const users = UserRows.parse(await this.execute(`select "id", "username" from "users"`));
    for (const user of users) {
      this.addSql(
        `update "users" set "username_key" = '${usernameKey(user.username)}', "username_skeleton" = '${usernameSkeletonKey(user.username)}' where "id" = '${user.id}';`,
      );
    }
    this.addSql(`alter table "users" alter column "username_skeleton" set not null;`);
    this.addSql(`alter table "users" add constraint "users_username_skeleton_unique" unique ("username_skeleton");`);
  }

  override down(): void | Promise<void> {
    this.addSql(`alter table "users" drop constraint "users_username_skeleton_unique";`);
    this.addSql(`alter table "users" drop column "username_skeleton";`);
    this.addSql(`update "users" set "username_key" = lower("username");`);
  }

}
