import { readFileSync } from 'node:fs';

/** This package's version, read once from its package.json. */
export const TESSERA_VERSION: string = (() => {
  try {
    return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();
