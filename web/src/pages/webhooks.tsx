// Webhooks (CONTRACT §4.12), the CEO's: create (the signing secret shown once), edit, enable or disable, delete,
// rotate the secret, send a test, and each webhook's recent deliveries with a redeliver button.
import { useQuery } from '@tanstack/preact-query';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import type { RouterInputs, RouterOutputs } from '../../../src/client/index.ts';
import { deliveriesQuery, followDeliveries, refreshWebhooks, webhookKeys, webhooksQuery } from '../api/webhooks.ts';
import { queryClient } from '../api/queryClient.ts';
import { trpc } from '../api/trpc.ts';
import { useSubmit } from '../api/useSubmit.ts';
import { validate } from '../api/validation.ts';
import { Badge, Failure, FormActions, Loading, Notice, onSubmitted, PageTitle, TextArea, TextInput } from '../components/ui.tsx';
import { dateTime, label, preciseTime } from '../lib/format.ts';
import { optionalText, type FieldErrors } from '../lib/forms.ts';
import { isCeo } from '../lib/roles.ts';
import { coveredByChannel, EVENT_CHOICES, eventGroups, toggled, type OfferedEventType } from '../lib/webhooks.ts';
import './webhooks.css';
import { copyOrSelect, type CopyOutcome } from '../lib/clipboard.ts';

type Webhook = RouterOutputs['webhooks']['list']['items'][number];
type Delivery = RouterOutputs['webhooks']['deliveries']['items'][number];
type Me = { username: string; role: string };

export function WebhooksPage({ me }: { me: Me }) {
  if (!isCeo(me.role)) {
    return (
      <section class="narrow">
        <PageTitle title="Webhooks">Webhooks</PageTitle>
        <p>Webhooks are managed by the CEO.</p>
      </section>
    );
  }
  return <Webhooks />;
}

function Webhooks() {
  const list = useQuery(webhooksQuery());
  const [formOpen, setFormOpen] = useState(false);
  const [created, setCreated] = useState<{ title: string; secret: string } | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const openButton = useRef<HTMLButtonElement>(null);
  const webhooks = list.data ?? [];
  return (
    <section>
      <PageTitle title="Webhooks">Webhooks</PageTitle>
      <p>
        Events are POSTed to each enabled webhook's URL as they happen, signed with its secret per the Standard Webhooks specification, and
        retried for up to a day and a half when the receiver fails. At most 20 webhooks.
      </p>
      {created ? (
        <SecretPanel
          title={created.title}
          secret={created.secret}
          onDone={() => {
            setCreated(null);
            openButton.current?.focus();
          }}
        />
      ) : formOpen ? (
        <NewWebhook
          onCancel={() => setFormOpen(false)}
          onCreated={(hook) => {
            setSaid(null);
            setFormOpen(false);
            setCreated({ title: `Webhook for ${hook.url} created`, secret: hook.secret });
          }}
        />
      ) : (
        <p>
          <button type="button" ref={openButton} onClick={() => setFormOpen(true)}>
            Create a webhook…
          </button>
        </p>
      )}
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      {list.isPending ? <Loading what="webhooks" /> : null}
      <Failure error={list.error} />
      {list.isSuccess && webhooks.length === 0 ? <p class="empty">No webhooks yet.</p> : null}
      <ul class="cards" aria-label="Webhooks">
        {webhooks.map((w) => (
          <li key={w.id}>
            <WebhookCard webhook={w} onSaid={setSaid} />
          </li>
        ))}
      </ul>
    </section>
  );
}

/** The event types as checkboxes, one group per channel with its `<channel>.*` first. */
function EventTypes({ value, onValue, error }: { value: readonly OfferedEventType[]; onValue: (types: OfferedEventType[]) => void; error: string | undefined }) {
  const hintId = `${useId()}-hint`;
  const errorId = error ? `${hintId}-error` : undefined;
  return (
    <fieldset class="event-types" aria-describedby={[hintId, errorId].filter(Boolean).join(' ')}>
      <legend>Event types</legend>
      <p class="hint" id={hintId}>
        What is sent: single event types, or every event of a channel (<code>approvals.*</code>), including types added later.
      </p>
      <div class="event-groups">
        {eventGroups().map((g) => (
          <fieldset key={g.channel} class="event-group">
            <legend>{label(g.channel)}</legend>
            {g.types.map((t) => (
              <label key={t} class="checkbox event-choice">
                <input type="checkbox" checked={value.includes(t)} onChange={(e) => onValue(toggled(value, t, e.currentTarget.checked))} />
                <span>
                  <code>{t}</code>
                  <span class="scope-text">
                    {EVENT_CHOICES[t].text}
                    {coveredByChannel(value, t) ? ' (already covered)' : ''}
                  </span>
                </span>
              </label>
            ))}
          </fieldset>
        ))}
      </div>
      {errorId ? (
        <p class="field-error" id={errorId}>
          {error}
        </p>
      ) : null}
    </fieldset>
  );
}

function NewWebhook({ onCancel, onCreated }: { onCancel: () => void; onCreated: (hook: RouterOutputs['webhooks']['create']) => void }) {
  const [url, setUrl] = useState('');
  const [types, setTypes] = useState<OfferedEventType[]>([]);
  const [description, setDescription] = useState('');
  const [enabled, setEnabled] = useState(true);
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useSubmit({
    mutationFn: (input: RouterInputs['webhooks']['create']) => trpc.webhooks.create.mutate(input),
    // The answer holds the secret: no cache keeps it once this form is gone.
    gcTime: 0,
    onSuccess: async (hook) => {
      onCreated(hook);
      await refreshWebhooks();
    },
  });
  return (
    <form
      class="panel"
      aria-label="Create a webhook"
      noValidate
      onSubmit={onSubmitted(async () => {
        const checked = await validate((s) => s.CreateWebhookInput, { url: url.trim(), event_types: types, description: optionalText(description), enabled });
        const found: FieldErrors = checked.ok ? {} : { ...checked.errors };
        if (types.length === 0) found.event_types = 'Choose at least one event type.';
        setErrors(found);
        if (checked.ok && Object.keys(found).length === 0) create.submit(checked.data);
      })}
    >
      <h2>Create a webhook</h2>
      <TextInput label="URL" type="url" value={url} onValue={setUrl} error={errors.url} hint="Where events are POSTed: http or https." placeholder="https://example.com/hooks/agent-org" autoComplete="off" required />
      <EventTypes value={types} onValue={setTypes} error={errors.event_types} />
      <TextArea label="Description (optional)" value={description} onValue={setDescription} error={errors.description} maxLength={500} rows={2} />
      <label class="checkbox">
        <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> Enabled: send events from now on
      </label>
      <Failure error={create.error} />
      <FormActions pending={create.isPending} pendingText="Creating…" onCancel={onCancel}>
        Create webhook
      </FormActions>
    </form>
  );
}

/** A signing secret, shown this once: copy it, then it is gone from the page. */
function SecretPanel({ title, secret, onDone }: { title: string; secret: string; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  const secretRef = useRef<HTMLElement>(null);
  const [copy, setCopy] = useState<CopyOutcome | null>(null);
  useEffect(() => heading.current?.focus(), []);
  const copySecret = async () => setCopy(await copyOrSelect(secret, secretRef.current));
  const headingId = `${useId()}-secret`;
  return (
    <section class="panel secret-panel" aria-labelledby={headingId}>
      <h2 id={headingId} ref={heading} tabIndex={-1}>
        {title}
      </h2>
      <p class="secret-warning">
        <strong>Copy the signing secret now: you will not see it again.</strong> The receiver verifies every request with it. If it is lost,
        rotate it.
      </p>
      <p class="secret">
        <code ref={secretRef}>{secret}</code>
      </p>
      <div class="actions">
        <button type="button" class="primary" onClick={() => void copySecret()}>
          Copy the secret
        </button>
        <button type="button" onClick={onDone}>
          Done, hide the secret
        </button>
      </div>
      <div aria-live="polite" class="copy-result">
        {copy === 'copied' ? <p>Copied to the clipboard.</p> : null}
        {copy === 'failed' ? <p>The clipboard is not available here: the secret is selected, copy it with Ctrl+C (⌘C on a Mac).</p> : null}
      </div>
    </section>
  );
}

type Mode = 'edit' | 'delete' | 'rotate' | null;

function WebhookCard({ webhook: w, onSaid }: { webhook: Webhook; onSaid: (text: string) => void }) {
  const [mode, setMode] = useState<Mode>(null);
  const [secret, setSecret] = useState<string | null>(null);
  const headingId = `webhook-${w.id}`;
  const toggle = useSubmit({
    mutationFn: () => trpc.webhooks.update.mutate({ webhook_id: w.id, enabled: !w.enabled }),
    onSuccess: async (after) => {
      onSaid(after.enabled ? `Webhook for ${w.url} enabled: events are sent from now on.` : `Webhook for ${w.url} disabled: no new events are sent.`);
      await refreshWebhooks();
    },
  });
  const test = useSubmit({
    mutationFn: () => trpc.webhooks.test.mutate({ webhook_id: w.id }),
    onSuccess: async () => {
      onSaid(`A test event is on its way to ${w.url}; see its delivery below.`);
      await queryClient.invalidateQueries({ queryKey: webhookKeys.deliveries(w.id) });
    },
  });
  return (
    <article class="card webhook" aria-labelledby={headingId}>
      <header class="card-head">
        <h2 id={headingId} class="webhook-url">
          {w.url}
        </h2>
        <div class="badges">
          {w.enabled ? <Badge kind="ok">Enabled</Badge> : <Badge kind="bad">Disabled</Badge>}
        </div>
      </header>
      {!w.enabled && w.disabled_reason !== null ? <p class="disabled-reason">Turned off by the service: {w.disabled_reason}.</p> : null}
      {w.description !== null ? <p class="description">{w.description}</p> : null}
      <dl class="facts">
        <div class="wide">
          <dt>Event types</dt>
          <dd>
            <ul class="chips scopes" aria-label={`Event types of ${w.url}`}>
              {w.event_types.map((t) => (
                <li key={t} class="chip">
                  <code>{t}</code>
                </li>
              ))}
            </ul>
          </dd>
        </div>
        <div>
          <dt>Created</dt>
          <dd>
            {dateTime(w.created_at)} <span class="by">by {w.created_by}</span>
          </dd>
        </div>
        <div>
          <dt>Changed</dt>
          <dd>{dateTime(w.updated_at)}</dd>
        </div>
      </dl>
      {secret !== null ? <SecretPanel title={`New signing secret for ${w.url}`} secret={secret} onDone={() => setSecret(null)} /> : null}
      {mode === 'edit' ? (
        <EditWebhook
          webhook={w}
          onDone={(text) => {
            setMode(null);
            if (text !== null) onSaid(text);
          }}
        />
      ) : mode === 'delete' ? (
        <DeleteWebhook webhook={w} onCancel={() => setMode(null)} onSaid={onSaid} />
      ) : mode === 'rotate' ? (
        <RotateSecret
          webhook={w}
          onCancel={() => setMode(null)}
          onRotated={(s) => {
            setMode(null);
            setSecret(s);
          }}
        />
      ) : (
        <div class="actions webhook-actions">
          <button type="button" onClick={() => test.submit()} disabled={test.isPending}>
            {test.isPending ? 'Sending…' : 'Send a test'}
          </button>
          <button type="button" onClick={() => setMode('edit')}>
            Edit…
          </button>
          <button type="button" onClick={() => toggle.submit()} disabled={toggle.isPending}>
            {w.enabled ? 'Disable' : 'Enable'}
          </button>
          <button type="button" onClick={() => setMode('rotate')}>
            Rotate secret…
          </button>
          <button type="button" class="danger-outline" onClick={() => setMode('delete')}>
            Delete…
          </button>
        </div>
      )}
      <Failure error={toggle.error ?? test.error} />
      <Deliveries webhook={w} />
    </article>
  );
}

function EditWebhook({ webhook: w, onDone }: { webhook: Webhook; onDone: (said: string | null) => void }) {
  const [url, setUrl] = useState(w.url);
  const [types, setTypes] = useState<OfferedEventType[]>(w.event_types.filter((t): t is OfferedEventType => Object.hasOwn(EVENT_CHOICES, t)));
  const [description, setDescription] = useState(w.description ?? '');
  const [errors, setErrors] = useState<FieldErrors>({});
  const update = useSubmit({
    mutationFn: (input: RouterInputs['webhooks']['update']) => trpc.webhooks.update.mutate(input),
    onSuccess: async (after) => {
      onDone(`Webhook for ${after.url} saved.`);
      await refreshWebhooks();
    },
  });
  return (
    <form
      class="panel edit-webhook"
      aria-label={`Edit the webhook for ${w.url}`}
      noValidate
      onSubmit={onSubmitted(async () => {
        const checked = await validate((s) => s.UpdateWebhookInput, { webhook_id: w.id, url: url.trim(), event_types: types, description: optionalText(description) });
        const found: FieldErrors = checked.ok ? {} : { ...checked.errors };
        if (types.length === 0) found.event_types = 'Choose at least one event type.';
        setErrors(found);
        if (checked.ok && Object.keys(found).length === 0) update.submit(checked.data);
      })}
    >
      <h3>Edit the webhook</h3>
      <TextInput label="URL" type="url" value={url} onValue={setUrl} error={errors.url} autoComplete="off" required />
      <EventTypes value={types} onValue={setTypes} error={errors.event_types} />
      <TextArea label="Description (optional)" value={description} onValue={setDescription} error={errors.description} maxLength={500} rows={2} />
      <Failure error={update.error} />
      <FormActions pending={update.isPending} pendingText="Saving…" onCancel={() => onDone(null)}>
        Save
      </FormActions>
    </form>
  );
}

function DeleteWebhook({ webhook: w, onCancel, onSaid }: { webhook: Webhook; onCancel: () => void; onSaid: (text: string) => void }) {
  const remove = useSubmit({
    mutationFn: () => trpc.webhooks.delete.mutate({ webhook_id: w.id }),
    onSuccess: async () => {
      onSaid(`Webhook for ${w.url} deleted, with its deliveries.`);
      await refreshWebhooks();
    },
  });
  return (
    <div class="confirm" role="group" aria-label={`Confirm deleting the webhook for ${w.url}`}>
      <p>Delete this webhook? Deliveries still queued for it are dropped. This cannot be undone.</p>
      <div class="actions">
        <button type="button" class="danger" onClick={() => remove.submit()} disabled={remove.isPending}>
          {remove.isPending ? 'Deleting…' : 'Delete the webhook'}
        </button>
        <button type="button" onClick={onCancel} disabled={remove.isPending}>
          Keep it
        </button>
      </div>
      <Failure error={remove.error} />
    </div>
  );
}

function RotateSecret({ webhook: w, onCancel, onRotated }: { webhook: Webhook; onCancel: () => void; onRotated: (secret: string) => void }) {
  const rotate = useSubmit({
    mutationFn: () => trpc.webhooks.rotateSecret.mutate({ webhook_id: w.id }),
    gcTime: 0,
    onSuccess: (answer) => onRotated(answer.secret),
  });
  return (
    <div class="confirm" role="group" aria-label={`Confirm rotating the secret of ${w.url}`}>
      <p>Replace the signing secret? The old one stops signing at once: the receiver must be given the new one.</p>
      <div class="actions">
        <button type="button" class="danger" onClick={() => rotate.submit()} disabled={rotate.isPending}>
          {rotate.isPending ? 'Rotating…' : 'Rotate the secret'}
        </button>
        <button type="button" onClick={onCancel} disabled={rotate.isPending}>
          Keep it
        </button>
      </div>
      <Failure error={rotate.error} />
    </div>
  );
}

const STATUS_BADGE: Record<Delivery['status'], { kind: string; text: string }> = {
  pending: { kind: 'pending', text: 'Pending' },
  succeeded: { kind: 'ok', text: 'Succeeded' },
  failed: { kind: 'bad', text: 'Failed' },
};

function Deliveries({ webhook: w }: { webhook: Webhook }) {
  const list = useQuery(deliveriesQuery(w.id));
  const deliveries = list.data ?? [];
  const headingId = `deliveries-${w.id}`;
  return (
    <section class="deliveries" aria-labelledby={headingId}>
      <h3 id={headingId}>Recent deliveries</h3>
      {list.isPending ? <Loading what="deliveries" /> : null}
      <Failure error={list.error} />
      {list.isSuccess && deliveries.length === 0 ? <p class="empty">No deliveries yet.</p> : null}
      {deliveries.length > 0 ? (
        <ul class="delivery-list" aria-label={`Deliveries to ${w.url}`}>
          {deliveries.map((d) => (
            <li key={d.id}>
              <DeliveryRow webhookId={w.id} delivery={d} />
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}

function DeliveryRow({ webhookId, delivery: d }: { webhookId: string; delivery: Delivery }) {
  const redeliver = useSubmit({
    mutationFn: () => trpc.webhooks.redeliver.mutate({ webhook_id: webhookId, delivery_id: d.id }),
    onSuccess: () => followDeliveries(webhookId),
  });
  const badge = STATUS_BADGE[d.status];
  return (
    <article class="delivery" aria-label={`${d.event_type} delivery ${d.id}`}>
      <div class="delivery-head">
        <Badge kind={badge.kind}>{badge.text}</Badge> <code>{d.event_type}</code>
      </div>
      <dl class="facts delivery-facts">
        <div>
          <dt>Attempts</dt>
          <dd>{d.attempts}</dd>
        </div>
        <div>
          <dt>Response</dt>
          <dd>{d.response_status === null ? '—' : `HTTP ${String(d.response_status)}`}</dd>
        </div>
        {d.error !== null ? (
          <div>
            <dt>Error</dt>
            <dd class="delivery-error">{d.error}</dd>
          </div>
        ) : null}
        <div>
          <dt>Queued</dt>
          <dd>{preciseTime(d.created_at)}</dd>
        </div>
        <div>
          <dt>Last attempt</dt>
          <dd>{d.last_attempt_at === null ? '—' : preciseTime(d.last_attempt_at)}</dd>
        </div>
        {d.next_attempt_at !== null ? (
          <div>
            <dt>Next attempt</dt>
            <dd>{preciseTime(d.next_attempt_at)}</dd>
          </div>
        ) : null}
        {d.succeeded_at !== null ? (
          <div>
            <dt>Succeeded</dt>
            <dd>{preciseTime(d.succeeded_at)}</dd>
          </div>
        ) : null}
      </dl>
      <button type="button" onClick={() => redeliver.submit()} disabled={redeliver.isPending} aria-label={`Redeliver ${d.event_type} delivery ${d.id}`}>
        {redeliver.isPending ? 'Queuing…' : 'Redeliver'}
      </button>
      <Failure error={redeliver.error} />
    </article>
  );
}
