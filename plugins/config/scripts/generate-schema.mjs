// Regenerates settings.schema.json from the zod schema. Run after `npx tsc -b plugins/config`:
//   node plugins/config/scripts/generate-schema.mjs
// A test (settings-schema.test.ts) fails when the committed file is out of date.
import { writeFileSync } from 'node:fs';
import { settingsJsonSchema } from '@tessera/plugin-config';

const target = new URL('../settings.schema.json', import.meta.url);
writeFileSync(target, `${JSON.stringify(settingsJsonSchema(), null, 2)}\n`);
console.log(`wrote ${target.pathname}`);
