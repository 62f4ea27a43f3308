import { homedir } from 'node:os';
import { resolve } from 'node:path';
import type { PermissionPolicy, PermissionQuery, ReadAccess, ToolPermission, ToolSchema, WorkspaceGrants } from '@tessera/contracts';
import { copyWith } from '@tessera/contracts';
import {
  compileRules,
  expandHome,
  explainPermission,
  readDenyTest,
  resolveAnchors,
  type DeniedPathTest,
  type PermissionExplanation,
  type PermissionRules,
  type SessionRule,
} from '@tessera/permission-rules';
import { offeredTools, webSearchDenied } from './offered-tools.js';

export interface RulesPermissionPolicyOptions {
  /** Folder `/x` rules are relative to; default: each session's cwd. */
  settingsRoot?: string;
  homeDir?: string;
}

/**
 * A `PermissionQuery` that may also carry the tool's `Tool.permission` (the enforcer adds it
 * from the `preToolUse` context), so a tool the rules do not know by name is judged by its family.
 */
export interface RulesPermissionQuery extends PermissionQuery {
  permission?: ToolPermission;
}

/** What a check knows beyond the query: the session's remembered rules, where a command runs. */
export interface ExplainOptions {
  /** The shell's directory after an earlier `cd`: a Bash command's relative paths resolve here. */
  commandCwd?: string;
}

/**
 * `PermissionPolicy` over Claude Code rules: deny → ask → allow → mode. Also `ReadAccess`
 * (the same Read deny rules as a path test for Glob and Grep results) and `WorkspaceGrants`
 * (the rules' `additionalDirectories`, which the file tools add to their workspace roots).
 */
export class RulesPermissionPolicy implements PermissionPolicy, ReadAccess, WorkspaceGrants {
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

  evaluate(query: RulesPermissionQuery): PermissionExplanation {
    return this.explain(query, []);
  }

  explain(query: RulesPermissionQuery, sessionRules: readonly SessionRule[], options: ExplainOptions = {}): PermissionExplanation {
    return explainPermission(query.toolName, query.input, query.mode, this.rules, {
      cwd: query.cwd,
      ...(query.permission === undefined ? {} : { permission: query.permission }),
      ...(this.options.settingsRoot === undefined ? {} : { settingsRoot: this.options.settingsRoot }),
      ...(this.options.homeDir === undefined ? {} : { homeDir: this.options.homeDir }),
      ...(options.commandCwd === undefined ? {} : { commandCwd: options.commandCwd }),
      sessionRules,
    });
  }

  /** `ReadAccess`: undefined when no Read deny rule exists; else a test prepared for this call. */
  deniedPaths(context: { cwd: string; sessionId: string }): DeniedPathTest | undefined {
    return readDenyTest(this.rules, resolveAnchors(copyWith(this.options, { cwd: context.cwd })));
  }

  /** `additionalDirectories` of the rules, resolved against `cwd`: the file tools add them to their workspace roots. */
  additionalDirectories(cwd: string): readonly string[] {
    return (this.rules.additionalDirectories ?? []).map((dir) => resolve(cwd, expandHome(dir, this.options.homeDir ?? homedir())));
  }

  /** Whether hosted web search must be kept out of model calls (`WebSearch` denied outright). */
  webSearchDenied(): boolean {
    return webSearchDenied(this.rules);
  }

  /** The tool list without the tools a deny rule denies outright. */
  offeredTools(tools: readonly ToolSchema[]): readonly ToolSchema[] {
    return offeredTools(this.rules, tools);
  }
}
