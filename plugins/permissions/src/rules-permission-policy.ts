import type { PermissionPolicy, PermissionQuery } from '@tessera/contracts';
import { explainPermission, type PermissionExplanation, type SessionRule } from './evaluate-permission.js';
import { compileRules, type PermissionRules } from './rule-set.js';

export interface RulesPermissionPolicyOptions {
  /** Folder `/x` rules are relative to; default: each session's cwd. */
  settingsRoot?: string;
  homeDir?: string;
}

/** `PermissionPolicy` over Claude Code rules: deny → ask → allow → mode. */
export class RulesPermissionPolicy implements PermissionPolicy {
  private rules: PermissionRules;

  constructor(
    rules: PermissionRules = {},
    private readonly options: RulesPermissionPolicyOptions = {},
  ) {
    this.rules = { ...rules };
  }

  /** Replaces the rules (for instance after settings changed); later checks use them. */
  setRules(rules: PermissionRules): void {
    this.rules = { ...rules };
  }

  getRules(): PermissionRules {
    return this.rules;
  }

  /** Rules that could not be read, with what to do about them. */
  problems(): ReturnType<typeof compileRules>['problems'] {
    return compileRules(this.rules).problems;
  }

  evaluate(query: PermissionQuery): PermissionExplanation {
    return this.explain(query, []);
  }

  explain(query: PermissionQuery, sessionRules: readonly SessionRule[]): PermissionExplanation {
    return explainPermission(query.toolName, query.input, query.mode, this.rules, {
      cwd: query.cwd,
      ...(this.options.settingsRoot === undefined ? {} : { settingsRoot: this.options.settingsRoot }),
      ...(this.options.homeDir === undefined ? {} : { homeDir: this.options.homeDir }),
      sessionRules,
    });
  }
}
