// The provider catalogue: the shipped default loads, broken files fail with the file and field named, tier matching.
import { describe, it, expect, afterAll } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultProvidersFile, ProviderCatalogueError, findModel, loadProviderCatalogue, modelsByTier, parseProviderCatalogue, pickModelForTier } from '../src/data/providerCatalogue.ts';
import type { ProviderCatalogue } from '../src/contracts/catalogue.ts';

const dir = mkdtempSync(join(tmpdir(), 'agent-org-providers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeCatalogue(fileName: string, content: string): string {
  const file = join(dir, fileName);
  writeFileSync(file, content);
  return file;
}

function loadError(file: string): ProviderCatalogueError {
  try {
    loadProviderCatalogue(file);
  } catch (err) {
    if (err instanceof ProviderCatalogueError) return err;
    throw err;
  }
  throw new Error(`${file} loaded without error`);
}

const model = (id: string, tier: string) => ({ id, display_name: id, tier });

describe('the default catalogue', () => {
  it('loads and offers every tier', () => {
    const catalogue = loadProviderCatalogue();
    expect(catalogue.providers.length).toBeGreaterThan(0);
    for (const tier of ['large', 'medium', 'small'] as const) {
      expect(modelsByTier(catalogue, tier).length, tier).toBeGreaterThan(0);
    }
    expect(loadProviderCatalogue(defaultProvidersFile())).toEqual(catalogue);
  });
});

describe('a broken catalogue file', () => {
  it('names the file and the exact field path of a bad tier', () => {
    const file = writeCatalogue(
      'bad-tier.json',
      JSON.stringify({ providers: [{ name: 'acme', display_name: 'Acme', models: [model('a-1', 'large'), model('a-2', 'huge')] }] }),
    );
    expect(loadError(file).message).toBe(`PROVIDERS_FILE ${file}: providers.0.models.1.tier: expected one of large|medium|small`);
  });

  it('lists every invalid field', () => {
    const file = writeCatalogue(
      'many.json',
      JSON.stringify({ providers: [{ name: 'Acme Corp', models: [{ id: 'x', tier: 'small' }] }] }),
    );
    const err = loadError(file);
    expect(err.file).toBe(file);
    expect(err.problems.map((p) => p.split(':')[0])).toEqual([
      'providers.0.name',
      'providers.0.display_name',
      'providers.0.models.0.display_name',
    ]);
  });

  it('reports duplicate provider names and duplicate model ids with their paths', () => {
    const file = writeCatalogue(
      'dupes.json',
      JSON.stringify({
        providers: [
          { name: 'acme', display_name: 'Acme', models: [model('m', 'large'), model('m', 'small')] },
          { name: 'acme', display_name: 'Acme again', models: [model('m', 'large')] },
        ],
      }),
    );
    const message = loadError(file).message;
    expect(message).toContain('providers.0.models.1.id: duplicate model id m');
    expect(message).toContain('providers.1.name: duplicate provider acme');
  });

  it('names the file when it is missing or not JSON', () => {
    const missing = join(dir, 'absent.json');
    expect(loadError(missing).message).toMatch(new RegExp(`^PROVIDERS_FILE ${missing}: cannot read file`));
    const notJson = writeCatalogue('not-json.json', '{ "providers": [');
    expect(loadError(notJson).message).toMatch(new RegExp(`^PROVIDERS_FILE ${notJson}: invalid JSON`));
  });

  it('reports a missing providers list at its path', () => {
    expect(() => parseProviderCatalogue({}, 'inline')).toThrow(/^PROVIDERS_FILE inline: providers: /);
  });
});

describe('model lookup', () => {
  const catalogue: ProviderCatalogue = parseProviderCatalogue(
    {
      providers: [
        { name: 'alpha', display_name: 'Alpha', models: [model('alpha-s', 'small'), model('alpha-s2', 'small')] },
        { name: 'beta', display_name: 'Beta', models: [model('beta-l', 'large'), model('beta-s', 'small')] },
      ],
    },
    'inline',
  );

  it('an empty provider list is a valid catalogue with nothing to pick', () => {
    const empty = parseProviderCatalogue({ providers: [] }, 'inline');
    expect(empty.providers).toEqual([]);
    expect(pickModelForTier(empty, 'medium')).toBeUndefined();
  });

  it('findModel needs both the provider and the model id to match', () => {
    expect(findModel(catalogue, 'beta', 'beta-l')?.tier).toBe('large');
    expect(findModel(catalogue, 'alpha', 'beta-l')).toBeUndefined();
    expect(findModel(catalogue, 'gamma', 'beta-l')).toBeUndefined();
  });

  it('modelsByTier keeps catalogue order across providers', () => {
    expect(modelsByTier(catalogue, 'small').map((c) => `${c.provider}/${c.model.id}`)).toEqual([
      'alpha/alpha-s',
      'alpha/alpha-s2',
      'beta/beta-s',
    ]);
  });

  it('pickModelForTier takes the first model of the tier, else the nearest tier', () => {
    expect(pickModelForTier(catalogue, 'small')).toEqual({ provider: 'alpha', model: model('alpha-s', 'small') });
    expect(pickModelForTier(catalogue, 'large')?.model.id).toBe('beta-l');
    // No medium model: a medium agent gets the more capable neighbour first.
    expect(pickModelForTier(catalogue, 'medium')?.model.id).toBe('beta-l');
    const smallOnly = parseProviderCatalogue({ providers: [{ name: 'p', display_name: 'P', models: [model('tiny', 'small')] }] }, 'inline');
    expect(pickModelForTier(smallOnly, 'large')?.model.id).toBe('tiny');
  });
});
