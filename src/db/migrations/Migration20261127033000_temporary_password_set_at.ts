// Temporary passwords expire (CONTRACT §3.7): users remember when the CEO or an operator set theirs.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127033000_temporary_password_set_at extends Migration {

  override name = 'Migration20261127033000_temporary_password_set_at';

  override up(): void {
    this.addSql(`alter table "users" add column "temporary_password_set_at" timestamptz(3) null;`);
    // Temporary passwords handed out before this version start their lifetime now, rather than expiring
    // at once under a rule their holders were never told of.
    this.addSql(`update "users" set "temporary_password_set_at" = now() where "must_change_password";`);
  }

  override down(): void {
    this.addSql(`alter table "users" drop column "temporary_password_set_at";`);
  }

}
