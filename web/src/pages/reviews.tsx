// A task's review stages: the decisions so far, and a form to decide a stage (pass, fail or skip; decisions are final).
import { useQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { RouterInputs } from '../../../src/client/index.ts';
import { useIdempotentSubmit } from '../api/useSubmit.ts';
import { invalidateChannel } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { validate } from '../api/validation.ts';
import { trpc } from '../api/trpc.ts';
import { Badge, Failure, Field, Loading, Notice, onSubmitted, PageTitle, Submit, TextArea, TextInput } from '../components/ui.tsx';
import { optionalText, type FieldErrors } from '../lib/forms.ts';
import { dateTime, label } from '../lib/format.ts';
import { VERDICTS } from '../lib/options.ts';
import { canDecideStages } from '../lib/roles.ts';
import { navigate } from '../router.ts';


/** Where to look up a task by id. */
export function ReviewsPage() {
  const [taskId, setTaskId] = useState('');
  const [error, setError] = useState<string | undefined>();
  return (
    <section class="narrow">
      <PageTitle title="Reviews">Reviews</PageTitle>
      <p>Every task has review stages; open a task to see its decisions and decide the next stage.</p>
      <form
        noValidate
        onSubmit={onSubmitted(async () => {
          const checked = await validate((s) => s.DecideStageInput.pick({ task_id: true }), { task_id: taskId.trim() });
          setError(checked.ok ? undefined : checked.errors.task_id);
          if (checked.ok) navigate(`/reviews/${encodeURIComponent(taskId.trim())}`);
        })}
      >
        <TextInput label="Task id" value={taskId} onValue={setTaskId} error={error} required />
        <button type="submit" class="primary">
          Open task
        </button>
      </form>
    </section>
  );
}

export function ReviewPage({ taskId, me }: { taskId: string; me: { role: string } }) {
  const stages = useQuery(queries.stages(taskId));
  const [said, setSaid] = useState<string | null>(null);
  return (
    <section>
      <PageTitle title={`Task ${taskId}`}>
        Review stages of <code>{taskId}</code>
      </PageTitle>
      {stages.isPending ? <Loading what="review stages" /> : null}
      <Failure error={stages.error} />
      {stages.isSuccess && stages.data.length === 0 ? <p class="empty">No stage of this task has been decided yet.</p> : null}
      {stages.isSuccess && stages.data.length > 0 ? (
        <ol class="cards" aria-label="Decided stages">
          {stages.data.map((s) => (
            <li key={s.stage_name} class="card">
              <header class="card-head">
                <h2>{s.stage_name}</h2>
                <Badge kind={`verdict-${s.verdict}`}>{label(s.verdict)}</Badge>
              </header>
              <p class="meta">
                by <strong>{s.decided_by}</strong> · {dateTime(s.decided_at)}
              </p>
              {s.reason ? <p class="description">{s.reason}</p> : null}
            </li>
          ))}
        </ol>
      ) : null}
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      {canDecideStages(me.role) ? <DecideStage taskId={taskId} onDecided={setSaid} /> : null}
    </section>
  );
}

function DecideStage({ taskId, onDecided }: { taskId: string; onDecided: (text: string) => void }) {
  const [stage, setStage] = useState('');
  const [verdict, setVerdict] = useState<string>('pass');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const decide = useIdempotentSubmit(
    (input: RouterInputs['reviews']['decideStage'], options) => trpc.reviews.decideStage.mutate(input, options),
    async (decided) => {
      setStage('');
      setReason('');
      onDecided(`Stage ${decided.stage_name}: ${decided.verdict}.`);
      await invalidateChannel('reviews');
    },
  );
  return (
    <form
      class="panel"
      aria-label="Decide a stage"
      noValidate
      onSubmit={onSubmitted(async () => {
        const checked = await validate((s) => s.DecideStageInput, { task_id: taskId, stage_name: stage, verdict, reason: optionalText(reason) });
        setErrors(checked.ok ? {} : checked.errors);
        if (checked.ok) decide.submit(checked.data);
      })}
    >
      <h2>Decide a stage</h2>
      <TextInput label="Stage" value={stage} onValue={setStage} error={errors.stage_name} hint="e.g. code_review, security, qa" maxLength={128} required />
      <Field label="Verdict" error={errors.verdict}>
        {({ describedBy }) => (
          <div class="radios" role="radiogroup" aria-describedby={describedBy}>
            {VERDICTS.map((v) => (
              <label key={v} class="radio">
                <input type="radio" name="verdict" value={v} checked={verdict === v} onChange={() => setVerdict(v)} /> {label(v)}
              </label>
            ))}
          </div>
        )}
      </Field>
      <TextArea label="Reason (optional)" value={reason} onValue={setReason} error={errors.reason} maxLength={4096} />
      <Failure error={decide.error} />
      <Submit pending={decide.isPending} pendingText="Saving…">
        Record decision
      </Submit>
    </form>
  );
}
