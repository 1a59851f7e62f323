// Sessions' revoked_reason takes the names session.revoked events publish (CONTRACT §4.8): two old names are renamed.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261123222724_session_end_reasons extends Migration {

  override name = 'Migration20261123222724_session_end_reasons';

  override up(): void {
    this.addSql(`update "sessions" set "revoked_reason" = 'password_changed' where "revoked_reason" = 'password_change';`);
    this.addSql(`update "sessions" set "revoked_reason" = 'refresh_replayed' where "revoked_reason" = 'refresh_reuse';`);
  }

  override down(): void {
    this.addSql(`update "sessions" set "revoked_reason" = 'password_change' where "revoked_reason" = 'password_changed';`);
    this.addSql(`update "sessions" set "revoked_reason" = 'refresh_reuse' where "revoked_reason" = 'refresh_replayed';`);
  }

}
