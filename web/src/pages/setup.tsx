// The setup wizard: name locales, the company (with or without a template), every edit of the agent roster, and completion.
import { useQuery } from '@tanstack/preact-query';
import { useEffect, useState } from 'preact/hooks';
import type { RouterInputs, RouterOutputs } from '../../../src/client/index.ts';
import { useCreateForm } from '../api/useCreateForm.ts';
import { useSubmit } from '../api/useSubmit.ts';
import { invalidateChannel } from '../api/keys.ts';
import { queries } from '../api/queries.ts';
import { validate } from '../api/validation.ts';
import { trpc } from '../api/trpc.ts';
import { Badge, Failure, FormActions, Loading, Notice, onSubmitted, OpenFormButton, PageTitle, Select, Submit, TextArea, TextInput } from '../components/ui.tsx';
import { optionalNumber, optionalText, type FieldErrors } from '../lib/forms.ts';
import { label } from '../lib/format.ts';
import { modelChoices, splitModel, type ModelChoice } from '../lib/models.ts';
import { LEVELS } from '../lib/options.ts';
import { Link, navigate } from '../router.ts';

type Agent = RouterOutputs['setup']['listAgents']['items'][number];
type Preset = RouterOutputs['setup']['personalityPresets']['items'][number];

const STEPS = [
  { id: 'locales', title: 'Name locales' },
  { id: 'company', title: 'Company' },
  { id: 'roster', title: 'Agents' },
  { id: 'finish', title: 'Finish' },
] as const;
type StepId = (typeof STEPS)[number]['id'];

export function SetupPage({ me, search }: { me: { role: string }; search: string }) {
  const status = useQuery(queries.setupStatus());
  const wanted = new URLSearchParams(search).get('step');
  const step: StepId = STEPS.find((s) => s.id === wanted)?.id ?? 'locales';
  const go = (id: StepId) => navigate(`/setup?step=${id}`);
  if (me.role !== 'ceo') {
    return (
      <section class="narrow">
        <PageTitle title="Setup">Setup</PageTitle>
        <p>Only the CEO runs the setup wizard.</p>
      </section>
    );
  }
  if (status.data && !status.data.needs_setup) {
    return (
      <section class="narrow">
        <PageTitle title="Setup">Setup is complete</PageTitle>
        <p>
          The organization is set up; the wizard cannot change it any more. Continue to the <Link href="/approvals">approvals</Link>.
        </p>
      </section>
    );
  }
  const index = STEPS.findIndex((s) => s.id === step);
  return (
    <section>
      <PageTitle title={`Setup: ${STEPS[index]?.title ?? ''}`}>Set up your organization</PageTitle>
      <nav aria-label="Setup steps" class="steps">
        <ol>
          {STEPS.map((s, i) => (
            <li key={s.id}>
              <Link href={`/setup?step=${s.id}`} aria-current={s.id === step ? 'step' : undefined}>
                <span class="step-number">{i + 1}</span> {s.title}
              </Link>
            </li>
          ))}
        </ol>
      </nav>
      {step === 'locales' ? <LocalesStep onNext={() => go('company')} /> : null}
      {step === 'company' ? <CompanyStep onNext={() => go('roster')} /> : null}
      {step === 'roster' ? <RosterStep onNext={() => go('finish')} /> : null}
      {step === 'finish' ? <FinishStep /> : null}
    </section>
  );
}

function LocalesStep({ onNext }: { onNext: () => void }) {
  const available = useQuery(queries.availableLocales());
  const current = useQuery(queries.locales());
  const [all, setAll] = useState(true);
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set());
  const [error, setError] = useState<string | undefined>();
  useEffect(() => {
    if (!current.data) return;
    const everything = current.data.locales.includes('__all__');
    setAll(everything);
    setChosen(new Set(everything ? [] : current.data.locales));
  }, [current.data]);
  const save = useSubmit({
    mutationFn: (locales: string[]) => trpc.setup.setLocales.mutate({ locales }),
    onSuccess: async () => {
      await invalidateChannel('setup');
      onNext();
    },
  });
  const toggle = (code: string, on: boolean) => {
    const next = new Set(chosen);
    if (on) next.add(code);
    else next.delete(code);
    setChosen(next);
  };
  if (available.isPending || current.isPending) return <Loading what="name locales" />;
  return (
    <form
      class="panel"
      aria-labelledby="locales-title"
      noValidate
      onSubmit={onSubmitted(async () => {
        if (!all && chosen.size === 0) return setError('Choose at least one locale, or all of them.');
        if (!all && chosen.size > 100) return setError('Choose at most 100 locales.');
        setError(undefined);
        save.submit(all ? ['__all__'] : [...chosen].sort());
      })}
    >
      <h2 id="locales-title">Name locales</h2>
      <p>Generated agent names (from a template or “Random name”) come from these locales.</p>
      <Failure error={available.error ?? current.error} />
      <label class="checkbox">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.currentTarget.checked)} /> Every locale
      </label>
      {!all && available.data ? (
        <div class="regions">
          {Object.entries(available.data.regions).map(([region, codes]) => (
            <fieldset key={region}>
              <legend>{label(region)}</legend>
              {codes.map((code) => (
                <label key={code} class="checkbox">
                  <input type="checkbox" name="locale" value={code} checked={chosen.has(code)} onChange={(e) => toggle(code, e.currentTarget.checked)} />{' '}
                  {available.data.display_names[code] ?? code}
                </label>
              ))}
            </fieldset>
          ))}
        </div>
      ) : null}
      {error ? (
        <p class="field-error" role="alert">
          {error}
        </p>
      ) : null}
      <Failure error={save.error} />
      <Submit pending={save.isPending} pendingText="Saving…">
        Save and continue
      </Submit>
    </form>
  );
}

function CompanyStep({ onNext }: { onNext: () => void }) {
  const templates = useQuery(queries.templates());
  const status = useQuery(queries.setupStatus());
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [template, setTemplate] = useState('');
  const [errors, setErrors] = useState<FieldErrors>({});
  const create = useSubmit({
    mutationFn: (input: RouterInputs['setup']['createCompany']) => trpc.setup.createCompany.mutate(input),
    onSuccess: async () => {
      await invalidateChannel('setup');
      onNext();
    },
  });
  return (
    <form
      class="panel"
      aria-labelledby="company-title"
      noValidate
      onSubmit={onSubmitted(async () => {
        const input = { company_name: name, description: optionalText(description), template_name: template === '' ? null : template };
        const checked = await validate((s) => s.SetupCompanyRequest, input);
        setErrors(checked.ok ? {} : checked.errors);
        if (checked.ok) create.submit(input);
      })}
    >
      <h2 id="company-title">Company</h2>
      {status.data?.has_company ? <Notice>A company exists already. Saving again replaces it; a template also replaces the agents.</Notice> : null}
      <TextInput label="Company name" value={name} onValue={setName} error={errors.company_name} maxLength={200} required />
      <TextArea label="Description (optional)" value={description} onValue={setDescription} error={errors.description} maxLength={1000} />
      <fieldset class="templates">
        <legend>Start from a template</legend>
        {templates.isPending ? <Loading what="templates" /> : null}
        <Failure error={templates.error} />
        <label class="template">
          <input type="radio" name="template" value="" checked={template === ''} onChange={() => setTemplate('')} />
          <span>
            <strong>No template</strong>
            <span class="hint">Build the roster agent by agent.</span>
          </span>
        </label>
        {templates.data?.map((t) => (
          <label key={t.name} class="template">
            <input type="radio" name="template" value={t.name} checked={template === t.name} onChange={() => setTemplate(t.name)} />
            <span>
              <strong>{t.display_name}</strong>
              <span class="hint">{t.description}</span>
              <span class="hint">
                {t.agent_count} agents · {t.department_count} departments · autonomy {t.autonomy_level} · {label(t.workflow)}
              </span>
            </span>
          </label>
        ))}
      </fieldset>
      {errors.template_name ? <p class="field-error">{errors.template_name}</p> : null}
      <Failure error={create.error} />
      <Submit pending={create.isPending} pendingText="Saving…">
        Save and continue
      </Submit>
    </form>
  );
}

function RosterStep({ onNext }: { onNext: () => void }) {
  const agents = useQuery(queries.agents());
  const presets = useQuery(queries.presets());
  const [said, setSaid] = useState<string | null>(null);
  const choices = modelChoices(agents.data ?? []);
  return (
    <div>
      <h2>Agents</h2>
      <p>Rename agents, draw new random names, and change their models and personalities. Add agents by hand below.</p>
      <div aria-live="polite">{said ? <Notice>{said}</Notice> : null}</div>
      {agents.isPending ? <Loading what="agents" /> : null}
      <Failure error={agents.error ?? presets.error} />
      {agents.data?.length === 0 ? <p class="empty">No agents yet. Choose a template in the previous step, or add agents here.</p> : null}
      <ul class="cards" aria-label="Agents">
        {agents.data?.map((a) => (
          <li key={a.agent_index}>
            <AgentCard agent={a} presets={presets.data ?? []} choices={choices} onSaid={setSaid} />
          </li>
        ))}
      </ul>
      <AddAgent presets={presets.data ?? []} choices={choices} onAdded={(n) => setSaid(`Agent ${n} added.`)} />
      <p>
        <button type="button" class="primary" onClick={onNext}>
          Continue
        </button>
      </p>
    </div>
  );
}

function AgentCard({ agent: a, presets, choices, onSaid }: { agent: Agent; presets: readonly Preset[]; choices: readonly ModelChoice[]; onSaid: (t: string) => void }) {
  const [name, setName] = useState(a.name);
  const [model, setModel] = useState(`${a.model_provider}/${a.model_id}`);
  const [preset, setPreset] = useState(a.personality_preset);
  const [errors, setErrors] = useState<FieldErrors>({});
  useEffect(() => setName(a.name), [a.name]);
  useEffect(() => setModel(`${a.model_provider}/${a.model_id}`), [a.model_provider, a.model_id]);
  useEffect(() => setPreset(a.personality_preset), [a.personality_preset]);
  const done = (text: string) => async () => {
    onSaid(text);
    await invalidateChannel('setup');
  };
  const rename = useSubmit({
    mutationFn: (input: RouterInputs['setup']['updateAgentName']) => trpc.setup.updateAgentName.mutate(input),
    onSuccess: (u) => done(`Agent ${String(u.agent_index + 1)} is now ${u.name}.`)(),
  });
  const randomize = useSubmit({
    mutationFn: () => trpc.setup.randomizeAgentName.mutate({ agent_index: a.agent_index }),
    onSuccess: (u) => done(`Agent ${String(u.agent_index + 1)} is now ${u.name}.`)(),
  });
  const remodel = useSubmit({
    mutationFn: (input: RouterInputs['setup']['updateAgentModel']) => trpc.setup.updateAgentModel.mutate(input),
    onSuccess: (u) => done(`${u.name} now runs on ${u.model_id}.`)(),
  });
  const repersonality = useSubmit({
    mutationFn: (input: RouterInputs['setup']['updateAgentPersonality']) => trpc.setup.updateAgentPersonality.mutate(input),
    onSuccess: (u) => done(`${u.name} is now ${label(u.personality_preset)}.`)(),
  });
  const busy = rename.isPending || randomize.isPending || remodel.isPending || repersonality.isPending;
  const current = `${a.model_provider}/${a.model_id}`;
  const modelOptions = choices.some((c) => c.value === current) ? choices : [{ value: current, provider: a.model_provider, model: a.model_id, tier: a.tier }, ...choices];
  const presetDescription = presets.find((p) => p.name === preset)?.description;
  return (
    <article class="card agent" aria-labelledby={`agent-${String(a.agent_index)}`}>
      <header class="card-head">
        <h3 id={`agent-${String(a.agent_index)}`}>{a.name}</h3>
        <div class="badges">
          <Badge kind="role">{a.role}</Badge>
          <Badge kind="neutral">{label(a.department)}</Badge>
          <Badge kind="neutral">{label(a.level)}</Badge>
          <Badge kind={`tier-${a.tier}`}>{a.tier}</Badge>
        </div>
      </header>
      <div class="agent-forms">
        <form
          class="inline-form"
          noValidate
          onSubmit={onSubmitted(async () => {
            const input = { agent_index: a.agent_index, name };
            const checked = await validate((s) => s.UpdateAgentNameInput, input);
            setErrors(checked.ok ? {} : checked.errors);
            if (checked.ok) rename.submit(input);
          })}
        >
          <TextInput label={`Name of agent ${String(a.agent_index + 1)}`} value={name} onValue={setName} error={errors.name} maxLength={200} />
          <Submit pending={rename.isPending} class="secondary" disabled={busy || name === a.name} pendingText="Saving…">
            Rename
          </Submit>
          <button type="button" class="secondary" disabled={busy} onClick={() => randomize.submit()}>
            {randomize.isPending ? 'Drawing…' : 'Random name'}
          </button>
        </form>
        <form
          class="inline-form"
          noValidate
          onSubmit={onSubmitted(async () => {
            remodel.submit({ agent_index: a.agent_index, ...splitModel(model) });
          })}
        >
          <Select
            label={`Model of ${a.name}`}
            value={model}
            onValue={setModel}
            options={modelOptions.map((c) => ({ value: c.value, label: `${c.model} (${c.provider}, ${c.tier})` }))}
          />
          <Submit pending={remodel.isPending} class="secondary" disabled={busy || model === current} pendingText="Saving…">
            Change model
          </Submit>
        </form>
        <form
          class="inline-form"
          noValidate
          onSubmit={onSubmitted(async () => {
            repersonality.submit({ agent_index: a.agent_index, personality_preset: preset });
          })}
        >
          <Select
            label={`Personality of ${a.name}`}
            value={preset}
            onValue={setPreset}
            options={(presets.length > 0 ? presets : [{ name: a.personality_preset, description: '' }]).map((p) => ({ value: p.name, label: label(p.name) }))}
            hint={presetDescription}
          />
          <Submit pending={repersonality.isPending} class="secondary" disabled={busy || preset === a.personality_preset} pendingText="Saving…">
            Change personality
          </Submit>
        </form>
      </div>
      <Failure error={rename.error ?? randomize.error ?? remodel.error ?? repersonality.error} />
    </article>
  );
}

const NEW_AGENT = { name: '', role: '', department: 'engineering', level: 'mid', personality_preset: 'pragmatic_builder', model: '', model_provider: '', model_id: '', budget: '' };

function AddAgent({ presets, choices, onAdded }: { presets: readonly Preset[]; choices: readonly ModelChoice[]; onAdded: (name: string) => void }) {
  const form = useCreateForm({
    empty: NEW_AGENT,
    send: (input: RouterInputs['setup']['createAgent'], options) => trpc.setup.createAgent.mutate(input, options),
    channel: 'setup',
    onCreated: (agent) => onAdded(agent.name),
  });
  const { values: v, set, errors, submission: add } = form;
  if (!form.open) return <OpenFormButton onOpen={() => form.setOpen(true)}>Add an agent…</OpenFormButton>;
  // Without a roster to learn models from, the provider and model are typed in.
  const picked = choices.length > 0 ? splitModel(v.model === '' ? (choices[0]?.value ?? '') : v.model) : { model_provider: v.model_provider, model_id: v.model_id };
  return (
    <form
      class="panel"
      aria-label="Add an agent"
      noValidate
      onSubmit={onSubmitted(async () => {
        const input = {
          name: v.name,
          role: v.role,
          department: v.department,
          level: v.level,
          personality_preset: v.personality_preset,
          ...picked,
          budget_limit_monthly: optionalNumber(v.budget),
        };
        const checked = await validate((s) => s.SetupAgentRequest, input);
        form.showErrors(checked);
        if (checked.ok) add.submit(checked.data);
      })}
    >
      <h3>Add an agent</h3>
      <TextInput label="Name" value={v.name} onValue={set('name')} error={errors.name} maxLength={200} required />
      <TextInput label="Role" value={v.role} onValue={set('role')} error={errors.role} hint="e.g. Backend Developer" maxLength={100} required />
      <TextInput label="Department" value={v.department} onValue={set('department')} error={errors.department} maxLength={100} />
      <Select label="Level" value={v.level} onValue={set('level')} options={LEVELS.map((l) => ({ value: l, label: label(l) }))} error={errors.level} />
      <Select
        label="Personality"
        value={v.personality_preset}
        onValue={set('personality_preset')}
        options={presets.map((p) => ({ value: p.name, label: label(p.name) }))}
        error={errors.personality_preset}
        hint={presets.find((p) => p.name === v.personality_preset)?.description}
      />
      {choices.length > 0 ? (
        <Select
          label="Model"
          value={v.model === '' ? (choices[0]?.value ?? '') : v.model}
          onValue={set('model')}
          options={choices.map((c) => ({ value: c.value, label: `${c.model} (${c.provider}, ${c.tier})` }))}
          error={errors.model_provider ?? errors.model_id}
        />
      ) : (
        <>
          <TextInput label="Model provider" value={v.model_provider} onValue={set('model_provider')} error={errors.model_provider} hint="e.g. anthropic" required />
          <TextInput label="Model id" value={v.model_id} onValue={set('model_id')} error={errors.model_id} hint="e.g. claude-sonnet-4-5" required />
        </>
      )}
      <TextInput label="Monthly budget (optional)" inputMode="decimal" value={v.budget} onValue={set('budget')} error={errors.budget_limit_monthly} hint="0 to 1,000,000" />
      <Failure error={add.error} />
      <FormActions pending={add.isPending} pendingText="Adding…" onCancel={() => form.setOpen(false)}>
        Add agent
      </FormActions>
    </form>
  );
}

function FinishStep() {
  const status = useQuery(queries.setupStatus());
  const complete = useSubmit({
    mutationFn: () => trpc.setup.complete.mutate(),
    onSuccess: async () => {
      await invalidateChannel('setup');
      navigate('/approvals');
    },
  });
  const s = status.data;
  const checks = s
    ? [
        { ok: s.has_company, text: 'A company is created' },
        { ok: s.has_agents, text: 'The roster has agents' },
        { ok: s.has_providers, text: 'The provider catalogue offers models' },
        { ok: s.has_name_locales, text: 'Name locales are chosen (optional: every locale otherwise)', optional: true },
      ]
    : [];
  return (
    <div class="panel">
      <h2>Finish</h2>
      {status.isPending ? <Loading what="setup status" /> : null}
      <ul class="checklist" aria-label="Setup checklist">
        {checks.map((c) => (
          <li key={c.text} class={c.ok ? 'done' : c.optional ? 'optional' : 'missing'}>
            <span aria-hidden="true">{c.ok ? '✓' : c.optional ? '–' : '✗'}</span> {c.text}
            <span class="visually-hidden">{c.ok ? ' (done)' : c.optional ? ' (optional)' : ' (missing)'}</span>
          </li>
        ))}
      </ul>
      <p>Completing setup is final: afterwards the company and the roster cannot be changed here.</p>
      <Failure error={complete.error} />
      <button type="button" class="primary" onClick={() => complete.submit()} disabled={complete.isPending} aria-busy={complete.isPending}>
        {complete.isPending ? 'Completing…' : 'Complete setup'}
      </button>
    </div>
  );
}
