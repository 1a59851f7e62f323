// useMutation for forms and buttons: one request per submission, even when a double click beats the re-render that disables the button.
import { useMutation, type UseMutationOptions, type UseMutationResult } from '@tanstack/preact-query';
import { useRef } from 'preact/hooks';

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
