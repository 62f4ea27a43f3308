import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the `tessera-source`
// export condition, so tests never depend on a stale build.
export default defineConfig({
  resolve: { conditions: ['tessera-source'] },
  ssr: { resolve: { conditions: ['tessera-source'] } },
  test: {
    include: ['{contracts,kernel,libs/*,plugins/*,presets/*,examples/*}/src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', 'test/bench/**'],
    // Reports once whether ../shared/compat is there (its suites are skipped when it is not).
    // One temp root per run, removed at its end (test/support/temp-root.ts).
    globalSetup: ['test/support/report-corpus.ts', 'test/support/temp-root.ts'],
    testTimeout: 20_000,
  },
});
