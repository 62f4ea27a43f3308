import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the `tessera-source`
// export condition, so tests never depend on a stale build.
export default defineConfig({
  resolve: { conditions: ['tessera-source'] },
  ssr: { resolve: { conditions: ['tessera-source'] } },
  test: {
    include: ['{contracts,kernel,plugins/*,presets/*,examples/*}/src/**/*.test.ts', 'test/**/*.test.ts'],
    exclude: ['**/node_modules/**', '**/dist/**', 'test/bench/**'],
    testTimeout: 20_000,
  },
});
