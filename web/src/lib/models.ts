// The model choices the wizard offers: the provider/model pairs the roster already uses (matched from the provider catalogue by tier).
export type ModelChoice = { value: string; provider: string; model: string; tier: string };

/**
 * Distinct provider/model pairs of `agents`, largest tier first. Until the API lists the whole catalogue
 * (`setup.providers`, CONTRACT §4.4 rev. 2), these are the models a client can know to be valid.
 */
export function modelChoices(agents: ReadonlyArray<{ model_provider: string; model_id: string; tier: string }>): ModelChoice[] {
  const seen = new Map<string, ModelChoice>();
  for (const a of agents) {
    const value = `${a.model_provider}/${a.model_id}`;
    if (!seen.has(value)) seen.set(value, { value, provider: a.model_provider, model: a.model_id, tier: a.tier });
  }
  const order: Record<string, number> = { large: 0, medium: 1, small: 2 };
  return [...seen.values()].sort((x, y) => (order[x.tier] ?? 9) - (order[y.tier] ?? 9) || x.value.localeCompare(y.value));
}

export function splitModel(value: string): { model_provider: string; model_id: string } {
  const slash = value.indexOf('/');
  return slash < 0 ? { model_provider: value, model_id: '' } : { model_provider: value.slice(0, slash), model_id: value.slice(slash + 1) };
}
