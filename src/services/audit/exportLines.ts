// The export's NDJSON, written byte for byte from PostgreSQL's binary COPY of the entries: no row objects, no string per field.
import type { ExportPosition } from './store.ts';

/**
 * The columns an export batch's COPY selects, in this order (store.ts: exportCopyStatement): each a text
 * column, as PostgreSQL's binary format sends text (its UTF-8 bytes), except `occurred_at` (microseconds
 * since 2000-01-01, a signed 64-bit integer) and `data` (jsonb: a version byte, then its JSON text).
 */
export const EXPORT_COLUMNS = ['id', 'occurred_at', 'type', 'actor', 'actor_type', 'api_key_id', 'ip_address', 'request_id', 'target_type', 'target_id', 'data'] as const;

const SIGNATURE = Buffer.from('PGCOPY\n\xff\r\n\0', 'latin1');
const PG_EPOCH_MS = Date.UTC(2000, 0, 1);
const JSONB_VERSION = 1;

// The line between the fields, exactly as JSON.stringify(toAuditEntry(row)) writes it (the same keys, in the same
// order): field n's key is KEYS[KEY_AT[n]..KEY_AT[n + 1]).
const KEY_TEXTS = ['{"id":', ...EXPORT_COLUMNS.slice(1).map((name) => `,"${name}":`)];
const KEYS = Buffer.from(KEY_TEXTS.join(''), 'latin1');
const KEY_AT = KEY_TEXTS.reduce((at, text) => [...at, (at.at(-1) ?? 0) + text.length], [0]);
const NULL = Buffer.from('null', 'latin1');
const END = Buffer.from('}\n', 'latin1');
const QUOTE = 0x22;
const BACKSLASH = 0x5c;

const HEADER = SIGNATURE.length + 8;

/** The timestamp at `at` (microseconds since 2000-01-01) in epoch milliseconds (the column keeps milliseconds); exact as a double until the year 287,000. */
function epochMs(copy: Buffer, at: number): number {
  const micros = copy.readInt32BE(at) * 2 ** 32 + copy.readUInt32BE(at + 4);
  return PG_EPOCH_MS + Math.floor(micros / 1000);
}

/**
 * The export lines of one batch, made from its binary COPY as the chunks arrive (push), so the work overlaps
 * the database's sending of the rest; end() gives the lines, how many, and the position after the last.
 */
export class CopyLines {
  #out = new LineBuffer();
  /** The start of a row (or of the header) that the chunks so far end inside of. */
  #pending: Buffer | null = null;
  #headerRead = false;
  #ended = false;
  #count = 0;
  #lastId = '';
  #lastMs = 0;

  push(chunk: Buffer): void {
    const copy = this.#pending === null ? chunk : Buffer.concat([this.#pending, chunk]);
    let at = 0;
    if (!this.#headerRead) {
      if (copy.length < HEADER) {
        this.#pending = copy;
        return;
      }
      if (!copy.subarray(0, SIGNATURE.length).equals(SIGNATURE)) throw new Error('not a binary COPY');
      const extension = copy.readUInt32BE(SIGNATURE.length + 4);
      if (copy.length < HEADER + extension) {
        this.#pending = copy;
        return;
      }
      at = HEADER + extension;
      this.#headerRead = true;
    }
    for (;;) {
      const end = this.#rowEnd(copy, at);
      if (end === -1) break;
      if (copy.readInt16BE(at) === -1) {
        this.#ended = true;
        at = end;
        break;
      }
      this.#row(copy, at);
      at = end;
    }
    this.#pending = at === copy.length ? null : copy.subarray(at);
    if (this.#ended && this.#pending !== null) throw new Error('bytes after the end of a binary COPY');
  }

  end(): { lines: Buffer[]; count: number; last: ExportPosition | null } {
    if (!this.#ended) throw new Error('a binary COPY ended early');
    const last = this.#count === 0 ? null : { occurredAt: new Date(this.#lastMs).toISOString(), id: this.#lastId };
    return { lines: this.#out.done(), count: this.#count, last };
  }

  /** Where the row (or the trailer) starting at `at` ends, or -1 when `copy` ends before it does. */
  #rowEnd(copy: Buffer, at: number): number {
    if (at + 2 > copy.length) return -1;
    const fields = copy.readInt16BE(at);
    if (fields === -1) return at + 2;
    if (fields !== EXPORT_COLUMNS.length) throw new Error(`an export row has ${String(fields)} columns, not ${String(EXPORT_COLUMNS.length)}`);
    let end = at + 2;
    for (let field = 0; field < fields; field++) {
      if (end + 4 > copy.length) return -1;
      end += 4 + Math.max(0, copy.readInt32BE(end));
    }
    return end > copy.length ? -1 : end;
  }

  /** Writes the line of the (whole) row at `at`. */
  #row(copy: Buffer, at: number): void {
    const out = this.#out;
    at += 2;
    for (let field = 0; field < EXPORT_COLUMNS.length; field++) {
      const length = copy.readInt32BE(at);
      at += 4;
      out.bytes(KEYS, KEY_AT[field] ?? 0, KEY_AT[field + 1] ?? 0);
      if (length === -1) {
        out.bytes(NULL, 0, NULL.length);
        continue;
      }
      const end = at + length;
      if (field === 1) {
        this.#lastMs = epochMs(copy, at);
        out.time(this.#lastMs);
      } else if (field === 10) {
        if (copy[at] !== JSONB_VERSION) throw new Error('unknown jsonb version in an export row');
        out.slice(copy, at + 1, end);
      } else {
        out.jsonString(copy, at, end);
        if (field === 0) this.#lastId = copy.toString('latin1', at, end);
      }
      at = end;
    }
    out.bytes(END, 0, END.length);
    this.#count++;
  }
}

const DAY_MS = 86_400_000;
const ZERO = 0x30;
const COLON = 0x3a;
const DOT = 0x2e;
const Z = 0x5a;

/** `value` in `width` decimal digits, zero-padded, at `to`; returns where it ends. */
function digits(buffer: Buffer, to: number, value: number, width: number): number {
  for (let i = width - 1; i >= 0; i--) {
    buffer[to + i] = ZERO + (value % 10);
    value = Math.floor(value / 10);
  }
  return to + width;
}

/** Output is made in buffers of this size: a batch's lines fill a few, and a write takes one. */
const OUTPUT_CHUNK = 256 * 1024;

/** The output bytes, in buffers of OUTPUT_CHUNK. */
class LineBuffer {
  #full: Buffer[] = [];
  #buffer = Buffer.allocUnsafe(OUTPUT_CHUNK);
  #length = 0;

  /** The buffer, with room for `bytes` more after #length: a fresh one when the current one is full (nothing is copied to grow). */
  #room(bytes: number): Buffer {
    if (this.#length + bytes > this.#buffer.length) {
      this.#full.push(this.#buffer.subarray(0, this.#length));
      this.#buffer = Buffer.allocUnsafe(Math.max(OUTPUT_CHUNK, bytes));
      this.#length = 0;
    }
    return this.#buffer;
  }

  /** Short constants, copied byte by byte: cheaper than a native copy's call for a dozen bytes. */
  bytes(source: Buffer, start: number, end: number): void {
    const buffer = this.#room(end - start);
    let to = this.#length;
    for (let from = start; from < end; from++) buffer[to++] = source[from] ?? 0;
    this.#length = to;
  }

  slice(source: Buffer, start: number, end: number): void {
    source.copy(this.#room(end - start), this.#length, start, end);
    this.#length += end - start;
  }

  #day = NaN;
  #dayPrefix = '';

  /**
   * A time as toISOString() writes it (`"2026-11-21T10:00:00.000Z"`), in quotes. Entries come in time order, so
   * the date (from toISOString()) is reused until the day changes; the time of day is written digit by digit.
   */
  time(epochMs: number): void {
    const day = Math.floor(epochMs / DAY_MS);
    if (day !== this.#day) {
      const iso = new Date(day * DAY_MS).toISOString();
      this.#day = day;
      this.#dayPrefix = iso.slice(0, iso.indexOf('T') + 1);
    }
    const prefix = this.#dayPrefix;
    const buffer = this.#room(prefix.length + 15);
    let to = this.#length;
    buffer[to++] = QUOTE;
    for (let i = 0; i < prefix.length; i++) buffer[to++] = prefix.charCodeAt(i);
    const ms = epochMs - day * DAY_MS;
    to = digits(buffer, to, Math.floor(ms / 3_600_000), 2);
    buffer[to++] = COLON;
    to = digits(buffer, to, Math.floor(ms / 60_000) % 60, 2);
    buffer[to++] = COLON;
    to = digits(buffer, to, Math.floor(ms / 1000) % 60, 2);
    buffer[to++] = DOT;
    to = digits(buffer, to, ms % 1000, 3);
    buffer[to++] = Z;
    buffer[to++] = QUOTE;
    this.#length = to;
  }

  /**
   * UTF-8 text as a JSON string. Most values (names, ids, addresses) need no escape and are copied as they
   * are; one with a quote, a backslash or a control character is escaped by JSON.stringify.
   */
  jsonString(source: Buffer, start: number, end: number): void {
    const buffer = this.#room(end - start + 2);
    let to = this.#length;
    buffer[to++] = QUOTE;
    for (let from = start; from < end; from++) {
      const byte = source[from] ?? 0;
      if (byte === QUOTE || byte === BACKSLASH || byte < 0x20) {
        // Only what is in #length counts: the bytes copied so far are written over.
        const escaped = Buffer.from(JSON.stringify(source.toString('utf8', start, end)));
        this.slice(escaped, 0, escaped.length);
        return;
      }
      buffer[to++] = byte;
    }
    buffer[to++] = QUOTE;
    this.#length = to;
  }

  done(): Buffer[] {
    return [...this.#full, this.#buffer.subarray(0, this.#length)].filter((chunk) => chunk.length > 0);
  }
}

