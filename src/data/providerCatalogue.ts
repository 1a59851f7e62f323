// The provider catalogue (PROVIDERS_FILE): loading it with precise errors, and model lookup by tier.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { z } from 'zod';
import { ProviderCatalogue, type CatalogueModel, type ModelTier } from '../contracts/catalogue.ts';

/**
 * The catalogue shipped with the repository, used when PROVIDERS_FILE is not set. A function, not a
 * constant, so the dashboard can bundle this module's schemas without node:url.
 */
export function defaultProvidersFile(): string {
  return fileURLToPath(new URL('./providers.default.json', import.meta.url));
}

export interface ModelChoice {
  provider: string;
  model: CatalogueModel;
}

/** Thrown when a catalogue file cannot be read or is invalid; the message names the file and each bad field. */
export class ProviderCatalogueError extends Error {
  readonly file: string;
  readonly problems: readonly string[];

  constructor(file: string, problems: readonly string[]) {
    super(`PROVIDERS_FILE ${file}: ${problems.join('; ')}`);
    this.name = 'ProviderCatalogueError';
    this.file = file;
    this.problems = problems;
  }
}

function describeIssues(error: z.ZodError): string[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return `${path === '' ? '(root)' : path}: ${issue.message}`;
  });
}

/** Validates already-parsed JSON; `file` only labels the error. */
export function parseProviderCatalogue(data: unknown, file: string): ProviderCatalogue {
  const result = ProviderCatalogue.safeParse(data);
  if (!result.success) throw new ProviderCatalogueError(file, describeIssues(result.error));
  return result.data;
}

/** Reads and validates a catalogue file (default: the shipped one). Synchronous: it runs once at boot. */
export function loadProviderCatalogue(filePath: string = defaultProvidersFile()): ProviderCatalogue {
  let text: string;
  try {
    text = readFileSync(filePath, 'utf8');
  } catch (err) {
    throw new ProviderCatalogueError(filePath, [`cannot read file: ${err instanceof Error ? err.message : String(err)}`]);
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (err) {
    throw new ProviderCatalogueError(filePath, [`invalid JSON: ${err instanceof Error ? err.message : String(err)}`]);
  }
  return parseProviderCatalogue(data, filePath);
}

export function findModel(catalogue: ProviderCatalogue, provider: string, modelId: string): CatalogueModel | undefined {
  return catalogue.providers.find((p) => p.name === provider)?.models.find((m) => m.id === modelId);
}

/** Every model of `tier`, in catalogue order (providers in file order, models in provider order). */
export function modelsByTier(catalogue: ProviderCatalogue, tier: ModelTier): ModelChoice[] {
  return catalogue.providers.flatMap((provider) =>
    provider.models.filter((model) => model.tier === tier).map((model) => ({ provider: provider.name, model })),
  );
}

/**
 * Tiers to try for a wanted tier, nearest first. A medium agent prefers a more capable model over a
 * weaker one when its own tier is missing.
 */
const TIER_FALLBACK: Readonly<Record<ModelTier, readonly ModelTier[]>> = {
  large: ['large', 'medium', 'small'],
  medium: ['medium', 'large', 'small'],
  small: ['small', 'medium', 'large'],
};

/** Deterministic: the first model of the nearest available tier; undefined only for an empty catalogue. */
export function pickModelForTier(catalogue: ProviderCatalogue, tier: ModelTier): ModelChoice | undefined {
  for (const candidate of TIER_FALLBACK[tier]) {
    const [first] = modelsByTier(catalogue, candidate);
    if (first) return first;
  }
  return undefined;
}
