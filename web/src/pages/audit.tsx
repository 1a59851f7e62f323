// The audit log (CONTRACT §4.13): who did what, newest first, with the filters in the URL, "load more" and an NDJSON export of the same view.
import { useInfiniteQuery } from '@tanstack/preact-query';
import { useState } from 'preact/hooks';
import type { RouterOutputs } from '../../../src/client/index.ts';
import { auditQuery } from '../api/audit.ts';
import { validate } from '../api/validation.ts';
import { Badge, Failure, Loading, onSubmitted, PageTitle, TextInput } from '../components/ui.tsx';
import {
  ACTOR_MARKERS,
  canReadAudit,
  compactData,
  exportHref,
  fromSearch,
  isoOfLocalInput,
  localInputOf,
  targetHref,
  toFilters,
  toSearch,
  TYPE_SUGGESTIONS,
  type AuditFilterForm,
} from '../lib/audit.ts';
import { preciseTime } from '../lib/format.ts';
import type { FieldErrors } from '../lib/forms.ts';
import { Link, navigate } from '../router.ts';
import './audit.css';

type Entry = RouterOutputs['audit']['list']['items'][number];
type Me = { username: string; role: string };

export function AuditPage({ me, search }: { me: Me; search: string }) {
  if (!canReadAudit(me.role)) {
    return (
      <section class="narrow">
        <PageTitle title="Audit log">Audit log</PageTitle>
        <p>The audit log is open to the CEO and board members only.</p>
      </section>
    );
  }
  return <AuditLog search={search} />;
}

function AuditLog({ search }: { search: string }) {
  const form = fromSearch(search);
  const list = useInfiniteQuery(auditQuery(toFilters(form)));
  const entries = list.data?.pages.flatMap((p) => p.items) ?? [];
  const filtered = toSearch(form) !== '';
  return (
    <section>
      <PageTitle title="Audit log">Audit log</PageTitle>
      <p>
        Every change, sign-in and failed sign-in, with who made it, from where and with which request. Entries are never edited; they are kept
        for a year unless the service is configured otherwise.
      </p>
      {/* Keyed by the URL: Back, or a link with other filters, puts the filters' own values back in the fields. */}
      <Filters key={search} form={form} />
      <p class="audit-tools">
        <a href={exportHref(form)} download>
          Export NDJSON
        </a>
        <span class="hint">{filtered ? ' These filters, oldest first, one entry per line.' : ' Every entry, oldest first, one entry per line.'}</span>
        <button type="button" onClick={() => void list.refetch()} disabled={list.isFetching}>
          {list.isFetching && !list.isFetchingNextPage ? 'Refreshing…' : 'Refresh'}
        </button>
      </p>
      {list.isPending ? <Loading what="the audit log" /> : null}
      <Failure error={list.error} />
      {list.isSuccess && entries.length === 0 ? <p class="empty">{filtered ? 'No entries match these filters.' : 'No entries yet.'}</p> : null}
      <ol class="audit-entries" aria-label="Audit entries">
        {entries.map((e) => (
          <li key={e.id}>
            <EntryRow entry={e} />
          </li>
        ))}
      </ol>
      {list.hasNextPage ? (
        <button type="button" onClick={() => void list.fetchNextPage()} disabled={list.isFetchingNextPage}>
          {list.isFetchingNextPage ? 'Loading…' : 'Load more'}
        </button>
      ) : null}
    </section>
  );
}

function Filters({ form }: { form: AuditFilterForm }) {
  const [values, setValues] = useState({ ...form, since: localInputOf(form.since), until: localInputOf(form.until) });
  const [errors, setErrors] = useState<FieldErrors>({});
  const set = (field: keyof AuditFilterForm) => (value: string) => setValues({ ...values, [field]: value });
  // Each filter change is a history entry: Back returns to the previous view of the log.
  const apply = async (next: typeof values) => {
    const wanted: AuditFilterForm = { ...next, since: isoOfLocalInput(next.since), until: isoOfLocalInput(next.until) };
    const filters = toFilters(wanted);
    const checked = await validate((s) => s.ListAuditInput, filters);
    setErrors(checked.ok ? {} : checked.errors);
    if (checked.ok) navigate(`/audit${toSearch(wanted)}`);
  };
  return (
    <form class="filters audit-filters" role="search" aria-label="Filter the audit log" noValidate onSubmit={onSubmitted(() => apply(values))}>
      <TextInput
        label="Type"
        value={values.type}
        onValue={set('type')}
        error={errors.type}
        hint="A type, or a prefix ending in a dot."
        placeholder="auth."
        list="audit-type-suggestions"
        autoComplete="off"
      />
      <datalist id="audit-type-suggestions">
        {TYPE_SUGGESTIONS.map((t) => (
          <option key={t} value={t} />
        ))}
      </datalist>
      <TextInput label="Actor" value={values.actor} onValue={set('actor')} error={errors.actor} hint="A username." autoComplete="off" />
      <TextInput label="Target id" value={values.target_id} onValue={set('target_id')} error={errors.target_id} hint="A user, approval, task, …" autoComplete="off" />
      <TextInput label="Since" type="datetime-local" value={values.since} onValue={set('since')} error={errors.since} hint="From this time on." />
      <TextInput label="Until" type="datetime-local" value={values.until} onValue={set('until')} error={errors.until} hint="Before this time." />
      <div class="actions filter-actions">
        <button type="submit" class="primary">
          Filter
        </button>
        <button type="button" onClick={() => navigate('/audit')}>
          Clear
        </button>
      </div>
      <div class="suggestions" role="group" aria-label="Suggested types">
        <span class="hint">Show only:</span>
        {TYPE_SUGGESTIONS.filter((t) => t.endsWith('.')).map((t) => (
          <button key={t} type="button" class="chip-button" aria-pressed={form.type === t} onClick={() => void apply({ ...values, type: t })}>
            {t}
          </button>
        ))}
      </div>
    </form>
  );
}

function EntryRow({ entry: e }: { entry: Entry }) {
  const marker = ACTOR_MARKERS[e.actor_type];
  const href = targetHref(e.target_type, e.target_id);
  const target = e.target_type === null ? null : `${e.target_type}${e.target_id === null ? '' : ` ${e.target_id}`}`;
  const data = compactData(e.data);
  return (
    <article class="audit-entry" aria-label={`${e.type} at ${preciseTime(e.occurred_at)}`}>
      <header class="audit-head">
        <time dateTime={e.occurred_at}>{preciseTime(e.occurred_at)}</time>
        <code class="audit-type">{e.type}</code>
      </header>
      <dl class="facts audit-facts">
        <div>
          <dt>Actor</dt>
          <dd class="audit-actor">
            {e.actor === null && marker === null ? '—' : e.actor}
            {e.actor !== null && marker !== null ? ' ' : null}
            {marker !== null ? <Badge kind={`actor-${e.actor_type}`}>{marker}</Badge> : null}
          </dd>
        </div>
        <div>
          <dt>Target</dt>
          <dd class="audit-target">{target === null ? '—' : href !== null ? <Link href={href}>{target}</Link> : target}</dd>
        </div>
        <div>
          <dt>IP</dt>
          <dd>{e.ip_address ?? '—'}</dd>
        </div>
        <div>
          <dt>Request id</dt>
          <dd>{e.request_id === null ? '—' : <code>{e.request_id}</code>}</dd>
        </div>
      </dl>
      {data === '{}' ? null : (
        <details class="audit-data">
          <summary>
            <span class="visually-hidden">Data: </span>
            <code>{data}</code>
          </summary>
          <pre>{JSON.stringify(e.data, null, 2)}</pre>
        </details>
      )}
    </article>
  );
}
