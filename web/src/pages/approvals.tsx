// The approvals queue: filters, urgency, new requests, and decisions (approve with a comment, reject with a reason).
import { useInfiniteQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { RouterInputs, RouterOutputs } from '../../../src/client/index.ts';
import { useCreateForm } from '../api/useCreateForm.ts';
import { useSubmit } from '../api/useSubmit.ts';
import { invalidateChannel } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { validate } from '../api/validation.ts';
import { trpc } from '../api/trpc.ts';
import { Badge, Failure, FormActions, Loading, Notice, onSubmitted, OpenFormButton, PageTitle, Select, Submit, TextArea, TextInput } from '../components/ui.tsx';
import { fromSearch, RISKS, STATUSES, toListFilters, toSearch, type FilterForm } from '../lib/approvalFilters.ts';
import { useNow } from '../lib/clock.ts';
import { optionalNumber, optionalText, type FieldErrors } from '../lib/forms.ts';
import { dateTime, label, secondsLeft, timeLeft, URGENCY_TEXT } from '../lib/format.ts';
import { describeFailure } from '../lib/problems.ts';
import { canRequestApprovals, mayDecide } from '../lib/roles.ts';
import { Link, navigate } from '../router.ts';

type Approval = RouterOutputs['approvals']['list']['items'][number];
type Me = { username: string; role: string };

export function ApprovalsPage({ me, search }: { me: Me; search: string }) {
  const form = fromSearch(search);
  const list = useInfiniteQuery(queries.approvals(toListFilters(form)));
  const [said, setSaid] = useState<string | null>(null);
  // A decision that lost a race: its card leaves the queue when the queue is read again, so its error is kept here.
  const [lostRace, setLostRace] = useState<unknown>(null);
  const decided = (text: string) => {
    setLostRace(null);
    setSaid(text);
  };
  const approvals = list.data?.pages.flatMap((p) => p.items) ?? [];
  return (
    <section>
      <PageTitle title="Approvals">Approvals</PageTitle>
      {canRequestApprovals(me.role) ? <NewApproval onCreated={(title) => setSaid(`Request “${title}” created.`)} /> : null}
      <Filters form={form} />
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      <Failure error={lostRace} />
      {list.isPending ? <Loading what="approvals" /> : null}
      <Failure error={list.error} />
      {list.isSuccess && approvals.length === 0 ? <p class="empty">No approvals match these filters.</p> : null}
      <ul class="cards" aria-label="Approval requests">
        {approvals.map((a) => (
          <li key={a.id}>
            <ApprovalCard approval={a} me={me} readAt={list.dataUpdatedAt} onDecided={decided} onLostRace={setLostRace} />
          </li>
        ))}
      </ul>
      {list.hasNextPage ? (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? 'Loading…' : 'Show more'}
        </button>
      ) : null}
    </section>
  );
}

function Filters({ form }: { form: FilterForm }) {
  const [action, setAction] = useState(form.action);
  const [error, setError] = useState<string | undefined>();
  // Each filter change is a history entry: Back returns to the previous view of the queue.
  const go = (next: FilterForm) => navigate(`/approvals${toSearch(next)}`);
  return (
    <form
      class="filters"
      role="search"
      aria-label="Filter approvals"
      noValidate
      onSubmit={onSubmitted(async () => {
        const checked = await validate((s) => s.ListApprovalsInput, { action_type: action.trim() === '' ? null : action.trim() });
        setError(checked.ok ? undefined : checked.errors.action_type);
        if (checked.ok) go({ ...form, action });
      })}
    >
      <Select
        label="Status"
        value={form.status}
        onValue={(v) => go({ ...form, action, status: v === 'all' ? 'all' : (STATUSES.find((s) => s === v) ?? 'pending') })}
        options={[...STATUSES.map((s) => ({ value: s, label: label(s) })), { value: 'all', label: 'All' }]}
      />
      <Select
        label="Risk"
        value={form.risk}
        onValue={(v) => go({ ...form, action, risk: RISKS.find((r) => r === v) ?? 'any' })}
        options={[{ value: 'any', label: 'Any' }, ...RISKS.map((r) => ({ value: r, label: label(r) }))]}
      />
      <TextInput label="Action type" value={action} onValue={setAction} error={error} placeholder="deploy:production" />
      <button type="submit">Filter</button>
    </form>
  );
}

type CardProps = { approval: Approval; me: Me; readAt: number; onDecided: (text: string) => void; onLostRace: (error: unknown) => void };

function ApprovalCard({ approval: a, me, readAt, onDecided, onLostRace }: CardProps) {
  const now = useNow(30_000);
  const [mode, setMode] = useState<'approve' | 'reject' | null>(null);
  const left = a.seconds_remaining === null ? null : secondsLeft(a.seconds_remaining, now - readAt);
  const decidable = mayDecide(me, a);
  const own = a.requested_by.toLowerCase() === me.username.toLowerCase();
  return (
    <article class={`card approval urgency-${a.urgency_level}`} aria-labelledby={`approval-${a.id}`}>
      <header class="card-head">
        <h2 id={`approval-${a.id}`}>{a.title}</h2>
        <div class="badges">
          <Badge kind={`status-${a.status}`}>{label(a.status)}</Badge>
          <Badge kind={`risk-${a.risk_level}`}>Risk: {a.risk_level}</Badge>
          {a.status === 'pending' ? (
            <Badge kind={`urgency-${a.urgency_level}`} title={URGENCY_TEXT[a.urgency_level]}>
              {a.urgency_level === 'no_expiry' ? 'No expiry' : `${label(a.urgency_level)} · ${timeLeft(left ?? 0)} left`}
            </Badge>
          ) : null}
        </div>
      </header>
      <p class="meta">
        <code>{a.action_type}</code> · requested by <strong>{a.requested_by}</strong> · {dateTime(a.created_at)}
        {a.task_id ? (
          <>
            {' '}
            · task <Link href={`/reviews/${encodeURIComponent(a.task_id)}`}>{a.task_id}</Link>
          </>
        ) : null}
      </p>
      <p class="description">{a.description}</p>
      {Object.keys(a.metadata).length > 0 ? (
        <dl class="metadata">
          {Object.entries(a.metadata).map(([k, v]) => (
            <div key={k}>
              <dt>{k}</dt>
              <dd>{v}</dd>
            </div>
          ))}
        </dl>
      ) : null}
      {a.decided_by ? (
        <p class="decision">
          {label(a.status)} by <strong>{a.decided_by}</strong>
          {a.decided_at ? ` · ${dateTime(a.decided_at)}` : ''}
          {a.decision_reason ? `: “${a.decision_reason}”` : ''}
        </p>
      ) : null}
      {a.status === 'pending' && own ? <p class="own">You requested this; another approver decides.</p> : null}
      {decidable && mode === null ? (
        <div class="actions">
          <button type="button" class="primary" onClick={() => setMode('approve')}>
            Approve…
          </button>
          <button type="button" class="danger" onClick={() => setMode('reject')}>
            Reject…
          </button>
        </div>
      ) : null}
      {decidable && mode !== null ? (
        <Decision
          approval={a}
          mode={mode}
          onCancel={() => setMode(null)}
          onDone={(text) => {
            setMode(null);
            onDecided(text);
          }}
          onLostRace={onLostRace}
        />
      ) : null}
    </article>
  );
}

type DecisionProps = { approval: Approval; mode: 'approve' | 'reject'; onCancel: () => void; onDone: (text: string) => void; onLostRace: (error: unknown) => void };

function Decision({ approval, mode, onCancel, onDone, onLostRace }: DecisionProps) {
  const [text, setText] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const decide = useSubmit({
    mutationFn: (input: { approval_id: string; comment?: string | null; reason?: string }) =>
      mode === 'approve'
        ? trpc.approvals.approve.mutate({ approval_id: input.approval_id, comment: input.comment ?? null })
        : trpc.approvals.reject.mutate({ approval_id: input.approval_id, reason: input.reason ?? '' }),
    onSuccess: async (decided) => {
      await invalidateChannel('approvals');
      onDone(`${mode === 'approve' ? 'Approved' : 'Rejected'} “${decided.title}”.`);
    },
    // Lost to another decision or to expiry (409): the queue is stale. Read it again, and keep the error in view.
    onError: (error) => {
      if (describeFailure(error).status !== 409) return;
      onLostRace(error);
      void invalidateChannel('approvals');
    },
  });
  const field = mode === 'approve' ? 'comment' : 'reason';
  return (
    <form
      class="decision-form"
      noValidate
      onSubmit={onSubmitted(async () => {
        const input = mode === 'approve' ? { approval_id: approval.id, comment: optionalText(text) } : { approval_id: approval.id, reason: text };
        const checked = await validate((s) => (mode === 'approve' ? s.ApproveInput : s.RejectInput), input);
        setErrors(checked.ok ? {} : checked.errors);
        if (checked.ok) decide.submit(input);
      })}
    >
      <TextArea
        label={mode === 'approve' ? 'Comment (optional)' : 'Reason for rejecting'}
        value={text}
        onValue={setText}
        error={errors[field]}
        maxLength={4096}
        required={mode === 'reject'}
      />
      <Failure error={decide.error} />
      <div class="actions">
        <Submit pending={decide.isPending} class={mode === 'approve' ? 'primary' : 'danger'} pendingText="Saving…">
          {mode === 'approve' ? 'Approve' : 'Reject'}
        </Submit>
        <button type="button" onClick={onCancel} disabled={decide.isPending}>
          Cancel
        </button>
      </div>
    </form>
  );
}

const EMPTY = { action_type: '', title: '', description: '', risk_level: 'medium', ttl_minutes: '', task_id: '' };

function NewApproval({ onCreated }: { onCreated: (title: string) => void }) {
  const form = useCreateForm({
    empty: EMPTY,
    send: (input: RouterInputs['approvals']['create'], options) => trpc.approvals.create.mutate(input, options),
    channel: 'approvals',
    onCreated: (created) => onCreated(created.title),
  });
  const { values: v, set, errors, submission: create } = form;
  if (!form.open) return <OpenFormButton onOpen={() => form.setOpen(true)}>New approval request…</OpenFormButton>;
  return (
    <form
      class="panel"
      aria-label="New approval request"
      noValidate
      onSubmit={onSubmitted(async () => {
        const minutes = optionalNumber(v.ttl_minutes);
        const input = {
          action_type: v.action_type,
          title: v.title,
          description: v.description,
          risk_level: v.risk_level,
          ttl_seconds: typeof minutes === 'number' ? minutes * 60 : minutes,
          task_id: optionalText(v.task_id),
        };
        const checked = await validate((s) => s.CreateApprovalInput, input);
        form.showErrors(checked);
        if (checked.ok) create.submit(checked.data);
      })}
    >
      <h2>New approval request</h2>
      <TextInput label="Action type" value={v.action_type} onValue={set('action_type')} error={errors.action_type} hint="category:action, e.g. deploy:production" required />
      <TextInput label="Title" value={v.title} onValue={set('title')} error={errors.title} maxLength={256} required />
      <TextArea label="Description" value={v.description} onValue={set('description')} error={errors.description} maxLength={4096} required />
      <Select label="Risk" value={v.risk_level} onValue={set('risk_level')} options={RISKS.map((r) => ({ value: r, label: label(r) }))} error={errors.risk_level} />
      <TextInput
        label="Time to decide (minutes)"
        inputMode="numeric"
        value={v.ttl_minutes}
        onValue={set('ttl_minutes')}
        error={errors.ttl_seconds ? 'Between 1 and 10080 minutes (7 days); empty for no expiry.' : undefined}
        hint="Empty: the request never expires."
      />
      <TextInput label="Task id (optional)" value={v.task_id} onValue={set('task_id')} error={errors.task_id} maxLength={128} />
      <Failure error={create.error} />
      <FormActions pending={create.isPending} pendingText="Creating…" onCancel={() => form.setOpen(false)}>
        Create request
      </FormActions>
    </form>
  );
}
