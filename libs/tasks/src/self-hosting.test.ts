import { describe, expect, it } from 'vitest';
import {
  SELF_HOSTING_TRANSITIONS,
  SelfHostingTransitionError,
  planSelfHostingVerification,
  transitionSelfHostingLoop,
  type SelfHostingLoopEvent,
  type SelfHostingLoopState,
} from './index.js';

describe('planSelfHostingVerification', () => {
  it('orders checkpoint, mutation, handoff, package checks, harness, rollback', () => {
    const plan = planSelfHostingVerification({
      changedFiles: ['libs/tasks/src/index.ts', 'plugins/system-prompt/src/index.ts', 'docs/x.md', 'libs/tasks/README.md'],
      packageScopes: ['@tessera/tasks', '@tessera/kernel'],
      baseRef: 'origin/main',
    });
    expect(plan.steps.map((step) => step.id)).toEqual([
      'checkpoint',
      'atomic_mutation',
      'process_handoff',
      'package_verification:@tessera/tasks',
      'package_verification:@tessera/kernel',
      'package_verification:@tessera/plugin-system-prompt',
      'harness_verification',
      'rollback_recovery',
    ]);
    expect(plan.steps[3]).toMatchObject({
      package: { name: '@tessera/tasks', directory: 'libs/tasks' },
      commands: [
        { command: 'npx', args: ['tsc', '-b', 'libs/tasks'] },
        { command: 'npx', args: ['vitest', 'run', 'libs/tasks'] },
      ],
    });
    expect(plan.steps[6]!.commands).toEqual([
      { command: 'git', args: ['diff', '--check', 'origin/main'] },
      { command: 'npm', args: ['test'] },
    ]);
    expect(plan.steps.at(-1)).toMatchObject({ when: 'on_failure', files: plan.steps[0]!.files });
    expect(plan.steps.filter((step) => step.when === 'on_failure')).toHaveLength(1);
  });

  it('always plans the harness, even with nothing scoped; accepts folders and explicit directories', () => {
    const empty = planSelfHostingVerification({ changedFiles: [], packageScopes: [], baseRef: 'HEAD' });
    expect(empty.steps.map((step) => step.kind)).toEqual(['checkpoint', 'atomic_mutation', 'process_handoff', 'harness_verification', 'rollback_recovery']);

    const mixed = planSelfHostingVerification({
      changedFiles: ['tools/x/src/a.ts', 'presets/test/src/index.ts'],
      packageScopes: ['libs/tasks/', '@tessera/tasks', '@acme/tool'],
      baseRef: 'HEAD',
      workspaceDirectories: { '@acme/tool': 'tools/x' },
      harnessCommands: [{ command: 'npm', args: ['run', 'typecheck'] }],
    });
    expect(mixed.steps.filter((step) => step.package).map((step) => step.package)).toEqual([
      { name: '@tessera/tasks', directory: 'libs/tasks' },
      { name: '@acme/tool', directory: 'tools/x' },
      { name: '@tessera/preset-test', directory: 'presets/test' },
    ]);
    expect(mixed.steps.find((step) => step.kind === 'harness_verification')!.commands).toEqual([{ command: 'npm', args: ['run', 'typecheck'] }]);
  });
});

describe('transitionSelfHostingLoop', () => {
  const states = Object.keys(SELF_HOSTING_TRANSITIONS) as SelfHostingLoopState[];
  const events: SelfHostingLoopEvent[] = [
    'checkpoint_created', 'edits_started', 'edits_applied', 'edits_failed', 'verify_started', 'verify_passed',
    'verify_failed', 'loop_completed', 'recovery_started', 'recovered', 'recovery_failed',
  ];

  it('walks the success path and the recovery path', () => {
    const run = (events: SelfHostingLoopEvent[]): SelfHostingLoopState => events.reduce(transitionSelfHostingLoop, 'idle' as SelfHostingLoopState);
    expect(run(['checkpoint_created', 'edits_started', 'edits_applied', 'verify_passed'])).toBe('verified');
    expect(run(['checkpoint_created', 'edits_started', 'edits_applied', 'verify_started', 'verify_passed', 'loop_completed'])).toBe('idle');
    expect(run(['checkpoint_created', 'edits_started', 'edits_applied', 'verify_started', 'verify_failed', 'recovery_started', 'recovery_failed', 'recovery_started', 'recovered'])).toBe('idle');
    expect(run(['checkpoint_created', 'edits_started', 'edits_failed'])).toBe('failed');
  });

  it('rejects every pair outside the table with a typed error naming state and event', () => {
    let rejected = 0;
    for (const state of states) {
      for (const event of events) {
        if (SELF_HOSTING_TRANSITIONS[state][event] !== undefined) continue;
        rejected++;
        expect(() => transitionSelfHostingLoop(state, event)).toThrow(SelfHostingTransitionError);
        try {
          transitionSelfHostingLoop(state, event);
        } catch (error) {
          expect(error).toMatchObject({ code: 'invalid_self_hosting_transition', category: 'state', state, event });
          expect((error as Error).message).toContain(`"${event}" in state "${state}"`);
        }
      }
    }
    expect(rejected).toBe(states.length * events.length - 13);
  });

  it('rejects unknown states and prototype keys', () => {
    expect(() => transitionSelfHostingLoop('nowhere' as SelfHostingLoopState, 'recovered')).toThrow(/not a self-hosting loop state/);
    expect(() => transitionSelfHostingLoop('idle', 'toString' as SelfHostingLoopEvent)).toThrow(SelfHostingTransitionError);
  });
});
