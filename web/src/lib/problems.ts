// What the user reads when a call fails: the ProblemDetail's detail, when to retry, or that the service was unreachable.
import { problemOf } from '../../../src/client/index.ts';

export type Failure = {
  /** The sentence to show: the server's `detail`, or ours when there was no answer. */
  message: string;
  status: number | null;
  /** Seconds until a retry can succeed (429 and 503 with `retry_after`), else null. */
  retryAfter: number | null;
};

export const UNREACHABLE = 'The service could not be reached. Check the connection and try again.';

export function describeFailure(error: unknown): Failure {
  const problem = problemOf(error);
  if (!problem) return { message: error instanceof Error && error.name === 'AbortError' ? 'The request was cancelled.' : UNREACHABLE, status: null, retryAfter: null };
  return { message: problem.detail, status: problem.status, retryAfter: problem.retryable ? problem.retry_after : null };
}

/** "Try again in 42 seconds." — whole seconds, at least one. */
export function retryText(seconds: number): string {
  const s = Math.max(1, Math.ceil(seconds));
  if (s < 90) return `Try again in ${String(s)} second${s === 1 ? '' : 's'}.`;
  const m = Math.ceil(s / 60);
  return `Try again in ${String(m)} minutes.`;
}

/**
 * TanStack Query's retry policy: answers from the server are final (a 4xx will not change, a 429 says
 * when itself); only a call that got no answer or a 503 is tried again, twice.
 */
export function shouldRetry(failureCount: number, error: unknown): boolean {
  if (failureCount >= 2) return false;
  const problem = problemOf(error);
  return problem === null || (problem.status === 503 && problem.retry_after === null);
}
