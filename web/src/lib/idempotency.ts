// One Idempotency-Key per distinct submission (CONTRACT §2.5): a retry of the same body reuses it, a changed body gets a new one.
export class IdempotencyKeys {
  private body: string | null = null;
  private key = '';
  private readonly newKey: () => string;

  constructor(newKey: () => string = () => crypto.randomUUID()) {
    this.newKey = newKey;
  }

  /** The key to send with `input`: the same as last time if the body is the same, so the server replays instead of repeating. */
  keyFor(input: unknown): string {
    const body = JSON.stringify(input);
    if (body !== this.body) {
      this.body = body;
      this.key = this.newKey();
    }
    return this.key;
  }

  /** After a success the next submission is a new resource, even with an identical body. */
  settled(): void {
    this.body = null;
  }
}
