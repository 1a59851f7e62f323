// Idempotency fingerprints become an HMAC under the server secret (CONTRACT §3.7): rows under the old SHA-256 go.
import { Migration } from '@mikro-orm/migrations';

export class Migration20261127040000_idempotency_fingerprint_hmac extends Migration {

  override name = 'Migration20261127040000_idempotency_fingerprint_hmac';

  override up(): void {
    // The old fingerprint, hex SHA-256 of the body (a POST /users body holds the initial password), would
    // keep that password guessable offline for the rest of the row's 24 hours; the new one is base64url and
    // never 64 hex digits. A retry that straddles the upgrade then runs as a new request.
    this.addSql(`delete from "idempotency_keys" where "fingerprint" ~ '^[0-9a-f]{64}$';`);
  }

  override down(): void {
    // Nothing to restore: the deleted rows cannot be recomputed without their bodies.
  }

}
