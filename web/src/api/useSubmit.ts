// useMutation for forms and buttons: one request per submission, even when a double click beats the re-render that disables the button.
import { useMutation, type UseMutationOptions, type UseMutationResult } from '@tanstack/preact-query';
import { useRef } from 'preact/hooks';
import { withIdempotencyKey } from '../../../src/client/index.ts';
import { IdempotencyKeys } from '../lib/idempotency.ts';

export type Submission<TData, TVariables> = UseMutationResult<TData, Error, TVariables> & {
  /** Starts the mutation unless one from this hook is still under way. */
  submit: (variables: TVariables) => void;
};

export function useSubmit<TData, TVariables = void>(options: UseMutationOptions<TData, Error, TVariables>): Submission<TData, TVariables> {
  const mutation = useMutation(options);
  // A ref, not `isPending`: a second click in the same frame still sees the state of the last render.
  const inFlight = useRef(false);
  const submit = (variables: TVariables) => {
    if (inFlight.current) return;
    inFlight.current = true;
    mutation.mutate(variables, {
      onSettled: () => {
        inFlight.current = false;
      },
    });
  };
  return { ...mutation, submit };
}

/**
 * useSubmit for a create that carries an Idempotency-Key (CONTRACT §2.5): one key per distinct body, so a
 * retry or a second click is replayed by the server instead of creating twice; after a success the next
 * submission is a new resource.
 */
export function useIdempotentSubmit<TData, TVariables>(
  send: (variables: TVariables, options: ReturnType<typeof withIdempotencyKey>) => Promise<TData>,
  onSuccess: (data: TData) => Promise<void>,
): Submission<TData, TVariables> {
  const keys = useRef(new IdempotencyKeys()).current;
  return useSubmit({
    mutationFn: (variables: TVariables) => send(variables, withIdempotencyKey(keys.keyFor(variables))),
    onSuccess: async (data) => {
      keys.settled();
      await onSuccess(data);
    },
  });
}
