import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { corpora } from '../../../test/support/compat-corpus.js';
import { packageRoot } from './config.test-helper.js';
import { settingsJsonSchema } from './settings-schema.js';

// Every settings file of every corpus present (the fixtures always, ../shared/compat when there).
const corpus = corpora.flatMap(({ root }) => {
  const dir = join(root, 'claude', 'settings');
  return readdirSync(dir).filter((name) => name.endsWith('.json')).map((name) => join(dir, name));
});

describe('settingsJsonSchema', () => {
  it('matches the generated settings.schema.json (regenerate with scripts/generate-schema.mjs)', () => {
    const committed: unknown = JSON.parse(readFileSync(join(packageRoot, 'settings.schema.json'), 'utf8'));
    expect(committed).toEqual(settingsJsonSchema());
  });

  it('is a draft 2020-12 object schema that allows unknown keys', () => {
    const schema = settingsJsonSchema();
    expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
    expect(schema.type).toBe('object');
    expect(Object.keys(schema.properties as object)).toEqual(expect.arrayContaining(['permissions', 'hooks', 'providers', 'currentProvider', 'env']));
  });

  // Round trip: JSON Schema → validator (zod's own importer), then every corpus file.
  const validator = z.fromJSONSchema(settingsJsonSchema() as Parameters<typeof z.fromJSONSchema>[0]);

  it.each(corpus)('the exported schema accepts %s', (file) => {
    // A byte order mark is not JSON; the settings reader drops it, and so does this check.
    const value: unknown = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
    const result = validator.safeParse(value);
    expect(result.error?.issues ?? []).toEqual([]);
  });

  it.each([
    ['a deny list that is a string', { permissions: { deny: 'Bash' } }],
    ['an unknown permission mode', { permissions: { defaultMode: 'yolo' } }],
    ['a hook handler without command', { hooks: { Stop: [{ hooks: [{ type: 'command' }] }] } }],
    ['a string timeout in a provider', { providers: { a: { type: 'openai', timeout: '5s' } } }],
  ])('the exported schema rejects %s', (_label, value) => {
    expect(validator.safeParse(value).success).toBe(false);
  });
});
