// Durations, dates and labels as the pages show them.
export function timeLeft(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  if (s < 60) return `${String(s)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${String(m)} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${String(h)} h` : `${String(h)} h ${String(m % 60)} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${String(d)} d` : `${String(d)} d ${String(h % 24)} h`;
}

/** Seconds left now for an approval read `ageMs` ago with `secondsRemaining` left then. */
export function secondsLeft(secondsRemaining: number, ageMs: number): number {
  return Math.max(0, secondsRemaining - Math.floor(ageMs / 1000));
}

const DATE_TIME = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

export function dateTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : DATE_TIME.format(d);
}

const DATE_TIME_SECONDS = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** To the second, for records that often come seconds apart (audit entries, delivery attempts). */
export function preciseTime(iso: string): string {
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : DATE_TIME_SECONDS.format(d);
}

const SPECIAL: Record<string, string> = { ceo: 'CEO', qa: 'QA', vp: 'VP', c_suite: 'C-suite' };

/** `pair_programmer` → `Pair programmer`. */
export function label(identifier: string): string {
  const special = SPECIAL[identifier];
  if (special !== undefined) return special;
  const spaced = identifier.replace(/_/g, ' ');
  return spaced.charAt(0).toUpperCase() + spaced.slice(1);
}

export const URGENCY_TEXT: Record<string, string> = {
  critical: 'Critical: expires within an hour',
  high: 'High: expires within 4 hours',
  normal: 'Normal',
  no_expiry: 'No expiry',
};
